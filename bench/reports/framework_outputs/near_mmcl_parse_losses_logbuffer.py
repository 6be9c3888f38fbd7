# Source: https://github.com/hexhew/reid-usl/blob/b68528a514ea4f86f34a27ee9411e923f227345a/reid/models/reids/base.py
# Report: the repository's _parse_losses: every log var becomes a Python float via .item() before the runner's LogBuffer keeps it; the head sums a per-call local list of hard-negative losses that is backpropagated
# Shape: only floats reach LogBuffer.val_history; the loss list in MMCLHead.forward is rebuilt every call and its sum is the loss that gets backward() (intended)
# Expect: near-miss: must be silent
from collections import OrderedDict, defaultdict

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class MemoryLayer(Function):
    @staticmethod
    def forward(ctx, inputs, indexes, features, momentum):
        ctx.momentum = momentum
        ctx.save_for_backward(inputs, indexes, features)
        return inputs.mm(features.t())

    @staticmethod
    def backward(ctx, grad_outputs):
        inputs, indexes, features = ctx.saved_tensors
        grad_inputs = grad_outputs.mm(features) if ctx.needs_input_grad[0] else None
        for x, y in zip(inputs, indexes):
            features[y] = ctx.momentum * features[y] + (1.0 - ctx.momentum) * x
            features[y] /= features[y].norm()
        return grad_inputs, None, None, None


class MMCLHead(nn.Module):
    def __init__(self, delta=5.0, r=0.01):
        super().__init__()
        self.delta = delta
        self.r = r

    def forward(self, logits, labels):
        N = logits.shape[0]
        loss = []
        for i in range(N):
            pos = torch.masked_select(logits[i], labels[i] == 1)
            neg = torch.masked_select(logits[i], labels[i] == 0)
            _, order = torch.sort(neg.clone().detach(), descending=True)
            num = int(self.r * neg.shape[0])
            mask = neg.new_zeros(neg.size(), dtype=torch.bool)
            mask[order[:num]] = 1
            hard_neg = torch.masked_select(neg, mask)
            loss.append(self.delta * torch.mean((1. - pos).pow(2)) + torch.mean((1 + hard_neg).pow(2)))
        return dict(loss=sum(loss) / N)


class MMCL(nn.Module):
    def __init__(self, backbone, feat_dim=2048, memory_size=12936, momentum=0.5):
        super().__init__()
        self.backbone = backbone
        self.head = MMCLHead()
        self.momentum = momentum
        self.register_buffer('features', torch.zeros(memory_size, feat_dim))

    def forward(self, img, idx):
        z = F.normalize(self.backbone(img), dim=1)
        logits = MemoryLayer.apply(z, idx, self.features, self.momentum)
        with torch.no_grad():
            labels = logits.new_zeros(logits.size(), dtype=torch.long)
            labels.scatter_(1, idx.unsqueeze(1), 1)
        return self.head(logits, labels)

    def _parse_losses(self, losses):
        log_vars = OrderedDict()
        for name, value in losses.items():
            if isinstance(value, torch.Tensor):
                log_vars[name] = value.mean()
            else:
                log_vars[name] = sum(v.mean() for v in value)
        loss = sum(v for k, v in log_vars.items() if 'loss' in k)
        log_vars['loss'] = loss
        for name, value in log_vars.items():
            if dist.is_available() and dist.is_initialized():
                value = value.data.clone()
                dist.all_reduce(value.div_(dist.get_world_size()))
            log_vars[name] = value.item()
        return loss, log_vars

    def train_step(self, data, optimizer):
        losses = self(data['img'], data['idx'])
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=data['img'].shape[0])


class LogBuffer:
    def __init__(self):
        self.val_history = defaultdict(list)
        self.n_history = defaultdict(list)
        self.output = OrderedDict()

    def clear(self):
        self.val_history.clear()
        self.n_history.clear()
        self.output.clear()

    def update(self, vars, count=1):
        for key, var in vars.items():
            self.val_history[key].append(var)
            self.n_history[key].append(count)

    def average(self, n=0):
        for key in self.val_history:
            vals = self.val_history[key][-n:]
            nums = self.n_history[key][-n:]
            self.output[key] = sum(v * c for v, c in zip(vals, nums)) / sum(nums)


class EpochRunner:
    def __init__(self, model, optimizer, interval=50):
        self.model = model
        self.optimizer = optimizer
        self.interval = interval
        self.log_buffer = LogBuffer()

    def train(self, data_loader, epoch):
        self.model.train()
        self.log_buffer.clear()
        for i, data in enumerate(data_loader):
            data = {k: v.cuda(non_blocking=True) for k, v in data.items()}
            outputs = self.model.train_step(data, self.optimizer)
            self.optimizer.zero_grad()
            outputs['loss'].backward()
            self.optimizer.step()
            self.log_buffer.update(outputs['log_vars'], outputs['num_samples'])
            if (i + 1) % self.interval == 0:
                self.log_buffer.average(self.interval)
                print(epoch, i + 1, dict(self.log_buffer.output))
