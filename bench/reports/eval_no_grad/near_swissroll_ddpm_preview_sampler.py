# Source: https://github.com/pix1506/Diffusion-ReviewAndDemo/blob/61931486aeb44db266ace4deeff728035d014400/test/diffusion_model_test_7.py
# Report: audit: the 2-D DDPM demo's preview sampler (p_sample_loop) ran the denoiser with grad on and kept every step in x_seq; this is the fixed variant: sampling under no_grad, each step moved to the host
# Shape: same sampler, now decorated with @torch.no_grad(): cur_x is still rebound from itself each step but carries no graph, and the trajectory list stores cur_x.cpu() copies
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class MLPDenoiser(nn.Module):
    def __init__(self, n_steps, hidden=128):
        super().__init__()
        self.t_embed = nn.Embedding(n_steps, hidden)
        self.inp = nn.Linear(2, hidden)
        self.mid = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, 2)

    def forward(self, x, t):
        return self.out(self.mid(self.inp(x) + self.t_embed(t)))


@torch.no_grad()
def p_sample_loop(model, shape, schedule, device):
    betas, one_minus_abar_sqrt = schedule["betas"], schedule["one_minus_abar_sqrt"]
    n_steps = betas.shape[0]
    model.eval()
    cur_x = torch.randn(shape, device=device)
    x_seq = [cur_x.cpu()]
    for i in reversed(range(n_steps)):
        t = torch.full((shape[0],), i, device=device, dtype=torch.long)
        coeff = betas[i] / one_minus_abar_sqrt[i]
        noise = torch.randn_like(cur_x) if i > 0 else torch.zeros_like(cur_x)
        eps_theta = model(cur_x, t)
        cur_x = (cur_x - coeff * eps_theta) / (1 - betas[i]).sqrt() + betas[i].sqrt() * noise
        x_seq.append(cur_x.cpu())
    return x_seq


def diffusion_loss(model, x0, schedule):
    n_steps = schedule["betas"].shape[0]
    t = torch.randint(0, n_steps, (x0.shape[0],), device=x0.device)
    eps = torch.randn_like(x0)
    a = schedule["abar_sqrt"][t].unsqueeze(1)
    s = schedule["one_minus_abar_sqrt"][t].unsqueeze(1)
    return (eps - model(a * x0 + s * eps, t)).square().mean()


def train(dataset, n_steps=100, epochs=4000, device="cuda"):
    betas = torch.linspace(1e-5, 0.5e-2, n_steps, device=device)
    abar = torch.cumprod(1 - betas, dim=0)
    schedule = {"betas": betas, "abar_sqrt": abar.sqrt(), "one_minus_abar_sqrt": (1 - abar).sqrt()}
    model = MLPDenoiser(n_steps).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(dataset, batch_size=128, shuffle=True)
    previews = {}
    for epoch in range(epochs):
        model.train()
        for x0 in loader:
            loss = diffusion_loss(model, x0.to(device), schedule)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        if epoch % 100 == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
            x_seq = p_sample_loop(model, tuple(dataset.shape), schedule, device)
            previews[epoch] = [x_seq[k] for k in range(10, n_steps + 1, 10)]
    return model, previews
