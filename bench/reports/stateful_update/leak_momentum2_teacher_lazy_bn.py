# Source: https://github.com/zengarden/momentum2-teacher/issues/6
# Report: question about the Momentum^2 Teacher BN: the running_mean/running_var EMA updates sit in `with torch.no_grad()` and the normalisation reads them .detach()ed; this rewrite drops the no_grad block
# Shape: forward() of a conv+BN block (iteration scope) rebinds self.running_mean / self.running_var from their own previous value and the batch statistics of the conv output, with grad enabled: each step's EMA links to the previous step's graph
# Expect: TML005 line 34; TML005 line 35
import torch
import torch.nn as nn


class MomentumBatchNorm2d(nn.Module):
    """Teacher-side BN whose statistics are a slow EMA (momentum^2 teacher)."""

    def __init__(self, in_channels, out_channels, momentum=0.01, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.weight = nn.Parameter(torch.ones(out_channels))
        self.bias = nn.Parameter(torch.zeros(out_channels))
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("running_mean", torch.zeros(out_channels))
        self.register_buffer("running_var", torch.ones(out_channels))

    def forward(self, x):
        x = self.conv(x)
        if not self.training:
            x = (x - self.running_mean[None, :, None, None]) / torch.sqrt(
                self.running_var[None, :, None, None] + self.eps
            )
            return x * self.weight[None, :, None, None] + self.bias[None, :, None, None]

        mean = x.mean(dim=[0, 2, 3])
        var = x.var(dim=[0, 2, 3], unbiased=False)
        n = x.numel() / x.size(1)

        self.running_mean = self.momentum * mean + (1 - self.momentum) * self.running_mean  # expect: TML005
        self.running_var = self.momentum * var * n / (n - 1) + (1 - self.momentum) * self.running_var  # expect: TML005

        x = (x - self.running_mean[None, :, None, None]) / torch.sqrt(
            self.running_var[None, :, None, None] + self.eps
        )
        return x * self.weight[None, :, None, None] + self.bias[None, :, None, None]


def train_teacher_student(student, teacher_head, loader, optimizer, epochs=1):
    for _ in range(epochs):
        for view1, view2 in loader:
            view1, view2 = view1.cuda(non_blocking=True), view2.cuda(non_blocking=True)
            p = student(view1)
            z = teacher_head(view2)
            loss = 2 - 2 * nn.functional.cosine_similarity(p, z.detach(), dim=-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
