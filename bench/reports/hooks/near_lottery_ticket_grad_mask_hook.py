# Source: https://github.com/facebookresearch/open_lth/issues/6
# Report: to keep pruned weights at zero, a user registered a gradient-masking hook (grad * mask) for each batch and found training very slow; the repo instead masks inside the pruned model
# Shape: same per-batch mask hooks on every prunable weight, but the handles are collected and removed after the optimizer step of the same batch
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def magnitude_masks(model, sparsity):
    masks = {}
    for name, param in model.named_parameters():
        if param.dim() > 1:
            k = int(param.numel() * sparsity)
            threshold = param.detach().abs().flatten().kthvalue(max(k, 1)).values
            masks[name] = (param.detach().abs() > threshold).float()
    return masks


class LotteryTicketTrainer:
    def __init__(self, model, loader, lr=0.1, sparsity=0.8, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.masks = {n: m.to(device) for n, m in magnitude_masks(self.model, sparsity).items()}

    def train_epoch(self):
        self.model.train()
        running = 0.0
        for step, (x, y) in enumerate(self.loader):
            x, y = x.to(self.device), y.to(self.device)
            handles = []
            for name, param in self.model.named_parameters():
                if name in self.masks:
                    mask = self.masks[name]
                    handle = param.register_hook(lambda grad, mask=mask: grad * mask)
                    handles.append(handle)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            for handle in handles:
                handle.remove()
            running += loss.item()
        return running / max(len(self.loader), 1)

    def fit(self, epochs):
        history = []
        for epoch in range(epochs):
            history.append(self.train_epoch())
        return history
