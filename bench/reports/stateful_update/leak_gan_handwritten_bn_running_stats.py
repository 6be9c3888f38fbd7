# Source: https://github.com/bilgekul/custom-GAN-/blob/652214ec87623b1173cfb9b5b56c4109c33c1ee9/CustomBN.py
# Report: audit of a hinge-loss GAN whose generator uses a hand-written BatchNorm: in training mode forward() rebinds the running_mean / running_var buffers from their own previous value and the graph-attached batch mean / variance, so the buffers chain a new graph link every generator call and never drop it
# Shape: BatchNorm.forward() rebinds self.running_mean / self.running_var (registered buffers) with no detach; GAN.train_gan() method owns the optimisers and loops over epochs, keeping .item() losses per epoch
# Expect: TML005 line 25; TML019 line 25; TML005 line 26; TML019 line 26
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean  # expect: TML005, TML019
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var  # expect: TML005, TML019
        else:
            mean, var = self.running_mean, self.running_var
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class Generator(nn.Module):
    def __init__(self, z_dim, widths=(256, 512, 1024, 2048), out_shape=(3, 32, 32)):
        super().__init__()
        dims = (z_dim,) + tuple(widths)
        self.fcs = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.bns = nn.ModuleList(BatchNorm(b) for b in widths)
        self.head = nn.Linear(widths[-1], out_shape[0] * out_shape[1] * out_shape[2])
        self.out_shape = out_shape

    def forward(self, z):
        h = z
        for fc, bn in zip(self.fcs, self.bns):
            h = F.relu(bn(fc(h)))
        return torch.tanh(self.head(h)).view(-1, *self.out_shape)


class GAN(nn.Module):
    def __init__(self, generator, discriminator, train_loader, num_epochs, z_dim, g_lr=2e-4, d_lr=2e-4):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.train_loader = train_loader
        self.num_epochs = num_epochs
        self.z_dim = z_dim
        self.g_lr, self.d_lr = g_lr, d_lr

    def noise(self, n, device):
        return torch.randn(n, self.z_dim, device=device)

    def train_gan(self, device="cuda"):
        opt_g = optim.Adam(self.generator.parameters(), lr=self.g_lr, betas=(0.5, 0.999))
        opt_d = optim.Adam(self.discriminator.parameters(), lr=self.d_lr, betas=(0.5, 0.999))
        for epoch in range(self.num_epochs):
            g_losses, d_losses = [], []
            for images, _ in self.train_loader:
                images = images.to(device)
                opt_g.zero_grad()
                fake = self.generator(self.noise(images.size(0), device))
                g_loss = -self.discriminator(fake).mean()
                g_loss.backward()
                opt_g.step()

                opt_d.zero_grad()
                real_loss = F.relu(1 - self.discriminator(images)).mean()
                fake_loss = F.relu(1 + self.discriminator(fake.detach())).mean()
                d_loss = real_loss + fake_loss
                d_loss.backward()
                opt_d.step()
                g_losses.append(g_loss.item())
                d_losses.append(d_loss.item())
            print(f"epoch {epoch} d {sum(d_losses) / len(d_losses):.4f} g {sum(g_losses) / len(g_losses):.4f}")
        return self.generator
