# Source: https://github.com/basiclab/GNGAN-PyTorch/blob/master/train.py
# Report: GN-GAN training loop: n_dis discriminator steps per generator step, the D losses are summed over the inner loop for logging as loss.cpu().item().
# Shape: the per-step sums start at 0 before the inner D loop and receive loss.cpu().item() (a Python float), so no D graph (which includes the create_graph gradient-norm graph) outlives its inner iteration.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def normalize_gradient(net_D, x):
    x.requires_grad_(True)
    f = net_D(x)
    grad = torch.autograd.grad(f, [x], torch.ones_like(f), create_graph=True, retain_graph=True)[0]
    grad_norm = torch.flatten(grad, start_dim=1).norm(p=2, dim=1).view(-1, 1)
    return f / (grad_norm + f.abs())


class Hinge(nn.Module):
    def forward(self, pred_real, pred_fake=None):
        if pred_fake is None:
            return -pred_real.mean()
        loss_real = F.relu(1 - pred_real).mean()
        loss_fake = F.relu(1 + pred_fake).mean()
        return loss_real + loss_fake, loss_real, loss_fake


def infinite(loader):
    while True:
        for batch in loader:
            yield batch


def train(net_G, net_D, loader, writer, total_steps=100000, n_dis=5, bs=64, z_dim=128, device="cuda"):
    loss_fn = Hinge()
    optim_G = optim.Adam(net_G.parameters(), lr=2e-4, betas=(0.0, 0.9))
    optim_D = optim.Adam(net_D.parameters(), lr=4e-4, betas=(0.0, 0.9))
    looper = infinite(loader)
    for step in range(1, total_steps + 1):
        loss_sum = 0
        loss_real_sum = 0
        loss_fake_sum = 0
        x_all = iter(torch.split(next(looper)[0], bs))
        for _ in range(n_dis):
            optim_D.zero_grad()
            x_real = next(x_all).to(device)
            with torch.no_grad():
                x_fake = net_G(torch.randn(bs, z_dim, device=device)).detach()
            pred = normalize_gradient(net_D, torch.cat([x_real, x_fake], dim=0))
            pred_real, pred_fake = torch.split(pred, [x_real.shape[0], x_fake.shape[0]])
            loss, loss_real, loss_fake = loss_fn(pred_real, pred_fake)
            loss.backward()
            optim_D.step()
            loss_sum += loss.cpu().item()
            loss_real_sum += loss_real.cpu().item()
            loss_fake_sum += loss_fake.cpu().item()

        writer.add_scalar("loss", loss_sum / n_dis, step)
        writer.add_scalar("loss_real", loss_real_sum / n_dis, step)
        writer.add_scalar("loss_fake", loss_fake_sum / n_dis, step)

        for p in net_D.parameters():
            p.requires_grad_(False)
        optim_G.zero_grad()
        fake = net_G(torch.randn(bs * 2, z_dim, device=device))
        loss_G = loss_fn(normalize_gradient(net_D, fake))
        loss_G.backward()
        optim_G.step()
        for p in net_D.parameters():
            p.requires_grad_(True)
