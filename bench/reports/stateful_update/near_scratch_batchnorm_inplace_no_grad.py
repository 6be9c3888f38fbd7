# Source: https://discuss.pytorch.org/t/implementing-batchnorm-in-pytorch-problem-with-updating-self-running-mean-and-self-running-var/49314/11
# Report: the answer in the thread keeps the running estimates as buffers and updates them without autograd, in place.
# Shape: the same helper returns graph-carrying batch statistics; the buffers are updated in place under torch.no_grad().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class ScratchBatchNorm2d(nn.Module):
    def __init__(self, channels, momentum=0.9, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))

    def _batch_stats(self, x):
        n = x.shape[0] * x.shape[2] * x.shape[3]
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3)) * n / (n - 1)
        return mean, var

    def forward(self, x):
        if self.training:
            mean, var = self._batch_stats(x)
            with torch.no_grad():
                self.running_mean.mul_(self.momentum).add_((1 - self.momentum) * mean)
                self.running_var.mul_(self.momentum).add_((1 - self.momentum) * var)
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        return x_hat * self.weight[None, :, None, None] + self.bias[None, :, None, None]


net = nn.Sequential(nn.Conv2d(3, 8, 3), ScratchBatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(1000):
    images, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    loss = nn.functional.cross_entropy(net(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
