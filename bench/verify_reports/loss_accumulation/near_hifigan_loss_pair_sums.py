# Source: https://github.com/pytorch/pytorch/issues/144181
# Report: the fix sums the losses as Python floats (.item()).
# Shape: the same GAN step; the epoch loop adds d_loss.item() and g_loss.item().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
generator = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 32)).to(device)
discriminator = nn.Sequential(nn.Linear(32, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1)).to(device)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-4)


def gan_step(noise, real):
    fake = generator(noise)
    d_loss = (discriminator(fake.detach()) - discriminator(real)).relu().mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -discriminator(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    return d_loss, g_loss


d_sum, g_sum = 0.0, 0.0
for step in range(24):
    d_loss, g_loss = gan_step(torch.randn(16, 16, device=device), torch.randn(16, 32, device=device))
    d_sum += d_loss.item()
    g_sum += g_loss.item()
print(float(d_sum) / 24, float(g_sum) / 24)
