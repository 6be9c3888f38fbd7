# Source: https://github.com/huyanxin/DeepComplexCRN/issues/20
# Report: with track_running_stats=True the ComplexBatchNorm makes host memory climb during training until it blows up; the running mean/var are lerp_'d in place from batch statistics that are still in the graph
# Shape: fixed as suggested in the thread: the in-place lerp_ updates of the running buffers run under torch.no_grad(), so the buffers never join the graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class ComplexBatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, track_running_stats=True):
        super().__init__()
        self.num_features = num_features // 2
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        self.Wrr = nn.Parameter(torch.ones(self.num_features))
        self.Wri = nn.Parameter(torch.zeros(self.num_features))
        self.Wii = nn.Parameter(torch.ones(self.num_features))
        self.register_buffer("RMr", torch.zeros(self.num_features))
        self.register_buffer("RMi", torch.zeros(self.num_features))
        self.register_buffer("RVrr", torch.ones(self.num_features))
        self.register_buffer("RVri", torch.zeros(self.num_features))
        self.register_buffer("RVii", torch.ones(self.num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, inputs):
        xr, xi = torch.chunk(inputs, 2, dim=1)
        factor = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            factor = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked.item()
        training = self.training or not self.track_running_stats
        redux = [i for i in reversed(range(xr.dim())) if i != 1]
        vdim = [1] * xr.dim()
        vdim[1] = xr.size(1)
        if training:
            Mr, Mi = xr, xi
            for d in redux:
                Mr = Mr.mean(d, keepdim=True)
                Mi = Mi.mean(d, keepdim=True)
            if self.track_running_stats:
                with torch.no_grad():
                    self.RMr.lerp_(Mr.squeeze(), factor)
                    self.RMi.lerp_(Mi.squeeze(), factor)
        else:
            Mr, Mi = self.RMr.view(vdim), self.RMi.view(vdim)
        xr, xi = xr - Mr, xi - Mi
        if training:
            Vrr, Vri, Vii = xr * xr, xr * xi, xi * xi
            for d in redux:
                Vrr = Vrr.mean(d, keepdim=True)
                Vri = Vri.mean(d, keepdim=True)
                Vii = Vii.mean(d, keepdim=True)
            if self.track_running_stats:
                with torch.no_grad():
                    self.RVrr.lerp_(Vrr.squeeze(), factor)
                    self.RVri.lerp_(Vri.squeeze(), factor)
                    self.RVii.lerp_(Vii.squeeze(), factor)
        else:
            Vrr, Vri, Vii = self.RVrr.view(vdim), self.RVri.view(vdim), self.RVii.view(vdim)
        Vrr, Vii = Vrr + self.eps, Vii + self.eps
        s = torch.sqrt(Vrr * Vii - Vri * Vri)
        t = torch.sqrt(Vrr + Vii + 2 * s)
        rst = 1.0 / (s * t)
        Urr, Uii, Uri = (s + Vii) * rst, (s + Vrr) * rst, -Vri * rst
        Wrr, Wri, Wii = self.Wrr.view(vdim), self.Wri.view(vdim), self.Wii.view(vdim)
        Zrr, Zri = Wrr * Urr + Wri * Uri, Wrr * Uri + Wri * Uii
        Zir, Zii = Wri * Urr + Wii * Uri, Wri * Uri + Wii * Uii
        yr, yi = Zrr * xr + Zri * xi, Zir * xr + Zii * xi
        return torch.cat([yr, yi], dim=1)
