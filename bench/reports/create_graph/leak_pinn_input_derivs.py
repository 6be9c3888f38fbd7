# Source: https://e-com-net.com/article/1727103597428158464.htm
# Report: solving a PDE with a neural net, derivatives taken with backward(create_graph=True) inside the training loop made memory grow until OOM (PyTorch warns about the param/grad reference cycle)
# Shape: residual helper calls u.sum().backward(create_graph=True) on fresh collocation points and reads xt.grad; .grad is never reset to None
# Expect: TML013 line 26
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, width=64, depth=4):
        super().__init__()
        layers, d_in = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d_in, width), nn.Tanh()]
            d_in = width
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, xt):
        return self.net(xt)


def heat_residual(net, xt, alpha=0.1):
    xt = xt.clone().requires_grad_(True)
    u = net(xt)
    u.sum().backward(create_graph=True)  # expect: TML013
    du = xt.grad
    u_x, u_t = du[:, 0:1], du[:, 1:2]
    u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, 0:1]
    return u_t - alpha * u_xx


def train(device="cuda", steps=20000, n_col=4096):
    net = MLP().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x0 = torch.linspace(-1, 1, 256, device=device).unsqueeze(1)
    xt0 = torch.cat([x0, torch.zeros_like(x0)], dim=1)
    u0 = torch.sin(torch.pi * x0)
    for step in range(steps):
        xt = torch.rand(n_col, 2, device=device) * torch.tensor([2.0, 1.0], device=device) - torch.tensor([1.0, 0.0], device=device)
        res = heat_residual(net, xt)
        loss = res.pow(2).mean() + (net(xt0) - u0).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 500 == 0:
            print(f"step {step} loss {loss.item():.3e} mem {torch.cuda.memory_allocated() / 2**20:.0f} MiB")
    return net
