# Source: https://github.com/wimh966/QDrop/blob/0b0668a9a6012c41f0371e4efb4e94ecf7bcc274/qdrop/quantization/observer.py
# Report: audited idiom: AvgMinMaxObserver.forward keeps a running average of activation min/max on self, computed from x_orig.clone().detach()
# Shape: as in the repository: the input is x_orig.clone().detach() before the running average on self, so each step's min/max carries no graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class ObserverBase(nn.Module):
    def __init__(self, bit=8, symmetric=False, ch_axis=-1):
        super().__init__()
        self.bit = bit
        self.symmetric = symmetric
        self.ch_axis = ch_axis
        self.eps = torch.tensor(1e-8, dtype=torch.float32)
        self.quant_min = -2 ** (bit - 1) if symmetric else 0
        self.quant_max = 2 ** (bit - 1) - 1 if symmetric else 2 ** bit - 1
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def calculate_qparams(self, min_val, max_val):
        min_val_neg = torch.min(min_val, torch.zeros_like(min_val))
        max_val_pos = torch.max(max_val, torch.zeros_like(max_val))
        scale = torch.max((max_val_pos - min_val_neg) / float(self.quant_max - self.quant_min), self.eps)
        zero_point = torch.clamp(self.quant_min - torch.round(min_val_neg / scale), self.quant_min, self.quant_max)
        return scale, zero_point


class AvgMinMaxObserver(ObserverBase):
    def __init__(self, bit=8, symmetric=False, ch_axis=-1):
        super().__init__(bit=bit, symmetric=symmetric, ch_axis=ch_axis)
        self.cnt = 0

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.clone().detach().to(self.min_val.dtype)
        min_val_cur = torch.amin(x)
        max_val_cur = torch.amax(x)
        if self.max_val.numel() <= 1 and self.max_val.isinf():
            self.min_val = min_val_cur
            self.max_val = max_val_cur
        else:
            self.min_val = (self.min_val * self.cnt + min_val_cur) / (self.cnt + 1)
            self.max_val = (self.max_val * self.cnt + max_val_cur) / (self.cnt + 1)
        self.cnt += 1
        return x_orig


class FakeQuantizeAct(nn.Module):
    def __init__(self, bit=8):
        super().__init__()
        self.observer = AvgMinMaxObserver(bit=bit)
        self.observer_enabled = True

    def forward(self, x):
        if self.observer_enabled:
            self.observer(x)
        scale, zero_point = self.observer.calculate_qparams(self.observer.min_val, self.observer.max_val)
        return torch.fake_quantize_per_tensor_affine(x, scale.item(), int(zero_point.item()),
                                                     self.observer.quant_min, self.observer.quant_max)


def qat_epoch(model, train_loader, optimizer, device):
    model.train()
    for images, targets in train_loader:
        images, targets = images.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), targets)
        loss.backward()
        optimizer.step()
