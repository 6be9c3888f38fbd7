# Source: https://github.com/Jermmy/pytorch-quantization-demo/blob/10a933c7a76d86840a8b6e0c522d70dc9671f6e7/module.py
# Report: QConvBNReLU folds BN into the conv for quantization-aware training and updates bn running_mean/running_var by hand in forward; the file keeps the old `mean = y.mean(1)` lines commented out above the `.detach()` version (source also: see also https://github.com/Jermmy/pytorch-quantization-demo/issues/17)
# Shape: the commented-out variant: batch mean/var taken from the conv output without detach, so the running statistics kept on self.bn_module chain every step's graph to the previous one
# Expect: TML005 line 47; TML005 line 48
import torch
import torch.nn as nn
import torch.nn.functional as F

from quant import FakeQuantize, QParam


class QModule(nn.Module):
    def __init__(self, qi=True, qo=True, num_bits=8):
        super().__init__()
        if qi:
            self.qi = QParam(num_bits=num_bits)
        if qo:
            self.qo = QParam(num_bits=num_bits)


class QConvBNReLU(QModule):
    def __init__(self, conv_module, bn_module, qi=True, qo=True, num_bits=8):
        super().__init__(qi=qi, qo=qo, num_bits=num_bits)
        self.conv_module = conv_module
        self.bn_module = bn_module
        self.qw = QParam(num_bits=num_bits)

    def fold_bn(self, mean, std):
        gamma_ = self.bn_module.weight / std
        weight = self.conv_module.weight * gamma_.view(self.conv_module.out_channels, 1, 1, 1)
        bias = self.bn_module.bias - gamma_ * mean
        if self.conv_module.bias is not None:
            bias = bias + gamma_ * self.conv_module.bias
        return weight, bias

    def forward(self, x):
        if hasattr(self, "qi"):
            self.qi.update(x.detach())
            x = FakeQuantize.apply(x, self.qi)
        conv = self.conv_module
        if self.training:
            y = F.conv2d(x, conv.weight, conv.bias, stride=conv.stride, padding=conv.padding)
            y = y.permute(1, 0, 2, 3).contiguous().view(conv.out_channels, -1)
            mean = y.mean(1)
            var = y.var(1)
            m = self.bn_module.momentum
            self.bn_module.running_mean = m * self.bn_module.running_mean + (1 - m) * mean  # expect: TML005
            self.bn_module.running_var = m * self.bn_module.running_var + (1 - m) * var  # expect: TML005
        else:
            mean = self.bn_module.running_mean
            var = self.bn_module.running_var
        std = torch.sqrt(var + self.bn_module.eps)
        weight, bias = self.fold_bn(mean, std)
        self.qw.update(weight.detach())
        x = F.conv2d(x, FakeQuantize.apply(weight, self.qw), bias, stride=conv.stride, padding=conv.padding)
        x = F.relu(x)
        if hasattr(self, "qo"):
            self.qo.update(x.detach())
            x = FakeQuantize.apply(x, self.qo)
        return x


def quantize_aware_training(model, device, train_loader, optimizer, epoch):
    lossLayer = nn.CrossEntropyLoss()
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model.quantize_forward(data)
        loss = lossLayer(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 50 == 0:
            print(f"Quantize Aware Training Epoch: {epoch} [{batch_idx}]\tLoss: {loss.item():.6f}")
