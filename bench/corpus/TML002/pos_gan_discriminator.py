# Modelled on: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
# Report: optimizer_D.zero_grad() was missing before the discriminator's backward step in the training loop.
import torch
import torch.nn.functional as F


def training_loop(G, D, optimizer_G, optimizer_D, loader, z_dim=128):
    for real in loader:
        real = real.cuda()
        z = torch.randn(real.size(0), z_dim, device="cuda")
        fake = G(z)

        d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
        d_loss.backward()  # expect: TML002
        optimizer_D.step()

        optimizer_G.zero_grad()
        g_loss = F.softplus(-D(fake)).mean()
        g_loss.backward()
        optimizer_G.step()
