# Source: https://github.com/wangtianrui/DCCRN/issues/9
# Report: training DCCRN with ComplexBatchNorm(track_running_stats=True) made host memory grow until it blew up; the running mean/variance buffers were lerp_'d towards the attached batch statistics every forward
# Shape: ComplexBatchNorm.forward updates its five running buffers in place with lerp_ from graph-attached batch moments, so each buffer's history chains to the previous step's graph
# Expect: TML005 line 38; TML005 line 39; TML005 line 46; TML005 line 47; TML005 line 48
import torch
import torch.nn as nn


class ComplexBatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, complex_axis=1):
        super().__init__()
        self.num_features = num_features // 2
        self.eps, self.momentum, self.complex_axis = eps, momentum, complex_axis
        self.Wrr = nn.Parameter(torch.ones(self.num_features))
        self.Wri = nn.Parameter(torch.zeros(self.num_features).uniform_(-0.9, 0.9))
        self.Wii = nn.Parameter(torch.ones(self.num_features))
        self.Br = nn.Parameter(torch.zeros(self.num_features))
        self.Bi = nn.Parameter(torch.zeros(self.num_features))
        for name, init in (("RMr", 0.0), ("RMi", 0.0), ("RVrr", 1.0), ("RVri", 0.0), ("RVii", 1.0)):
            self.register_buffer(name, torch.full((self.num_features,), init))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, inputs):
        xr, xi = torch.chunk(inputs, 2, dim=self.complex_axis)
        redux = [d for d in reversed(range(xr.dim())) if d != 1]
        vdim = [1] * xr.dim()
        vdim[1] = xr.size(1)
        factor = 0.0
        if self.training:
            self.num_batches_tracked += 1
            factor = self.momentum

        if self.training:
            Mr, Mi = xr, xi
            for d in redux:
                Mr = Mr.mean(d, keepdim=True)
                Mi = Mi.mean(d, keepdim=True)
            self.RMr.lerp_(Mr.squeeze(), factor)  # expect: TML005
            self.RMi.lerp_(Mi.squeeze(), factor)  # expect: TML005
            xr, xi = xr - Mr, xi - Mi
            Vrr, Vri, Vii = xr * xr, xr * xi, xi * xi
            for d in redux:
                Vrr = Vrr.mean(d, keepdim=True)
                Vri = Vri.mean(d, keepdim=True)
                Vii = Vii.mean(d, keepdim=True)
            self.RVrr.lerp_(Vrr.squeeze(), factor)  # expect: TML005
            self.RVri.lerp_(Vri.squeeze(), factor)  # expect: TML005
            self.RVii.lerp_(Vii.squeeze(), factor)  # expect: TML005
        else:
            xr, xi = xr - self.RMr.view(vdim), xi - self.RMi.view(vdim)
            Vrr, Vri, Vii = self.RVrr.view(vdim), self.RVri.view(vdim), self.RVii.view(vdim)

        Vrr, Vii = Vrr + self.eps, Vii + self.eps
        s = torch.sqrt(Vrr * Vii - Vri * Vri)
        t = torch.sqrt(Vrr + Vii + 2 * s)
        rst = 1.0 / (s * t)
        Urr, Uii, Uri = (s + Vii) * rst, (s + Vrr) * rst, -Vri * rst
        Wrr, Wri, Wii = self.Wrr.view(vdim), self.Wri.view(vdim), self.Wii.view(vdim)
        Zrr, Zri = Wrr * Urr + Wri * Uri, Wrr * Uri + Wri * Uii
        Zir, Zii = Wri * Urr + Wii * Uri, Wri * Uri + Wii * Uii
        yr = Zrr * xr + Zri * xi + self.Br.view(vdim)
        yi = Zir * xr + Zii * xi + self.Bi.view(vdim)
        return torch.cat([yr, yi], dim=self.complex_axis)


def train_epoch(model, loader, optimizer, si_snr_loss, device="cuda"):
    model.train()
    total = 0.0
    for noisy, clean in loader:
        noisy, clean = noisy.to(device), clean.to(device)
        est = model(noisy)
        loss = si_snr_loss(est, clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)
