# Source: https://github.com/lucaayscough/Gravity/blob/4522c16f3bf9cfd5183550d370fda70626e688f0/Generator/loss.py
# Report: audit of the WGAN-GP discriminator step (fixed form): the critic loss is backpropagated once without retain_graph and only a detached copy is kept on self for logging, so the graph (and the penalty's double-backward graph) is freed at the end of each step
# Shape: same trainer methods; a local critic loss gets a plain backward() and self.loss_disc / self.loss_gen keep .detach()ed values that the loop only prints
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader


def gradient_penalty(critic, real, fake, device="cuda"):
    eps = torch.rand(real.size(0), 1, 1, device=device)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(mixed)
    grad = torch.autograd.grad(scores, mixed, grad_outputs=torch.ones_like(scores),
                               create_graph=True, retain_graph=True)[0]
    return ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


class WGANGPTrainer:
    def __init__(self, netG, netD, dataset, z_dim=128, batch_size=32, lr=1e-4,
                 n_critic=5, gp_weight=10.0, device="cuda"):
        self.netG, self.netD = netG.to(device), netD.to(device)
        self.loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
        self.z_dim, self.batch_size, self.device = z_dim, batch_size, device
        self.n_critic, self.gp_weight = n_critic, gp_weight
        self.opt_gen = torch.optim.Adam(netG.parameters(), lr=lr, betas=(0.0, 0.9))
        self.opt_dis = torch.optim.Adam(netD.parameters(), lr=lr, betas=(0.0, 0.9))
        self.loss_disc = None
        self.loss_gen = None

    def _noise(self):
        return torch.randn(self.batch_size, self.z_dim, device=self.device)

    def train_discriminator(self, real):
        fake = self.netG(self._noise())
        disc_real = self.netD(real)
        disc_fake = self.netD(fake)
        gp = gradient_penalty(self.netD, real, fake, device=self.device)
        loss_disc = -(disc_real.mean() - disc_fake.mean()) + self.gp_weight * gp
        self.netD.zero_grad()
        loss_disc.backward()
        self.loss_disc = loss_disc.detach()
        self.opt_dis.step()

    def train_generator(self):
        output = self.netD(self.netG(self._noise()))
        loss_gen = -output.mean()
        self.netG.zero_grad()
        loss_gen.backward()
        self.loss_gen = loss_gen.detach()
        self.opt_gen.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            for idx, (real, _) in enumerate(self.loader):
                self.train_discriminator(real.to(self.device))
                if idx % self.n_critic == 0:
                    self.train_generator()
                if idx % 200 == 0:
                    print(f"[{epoch}] {idx}/{len(self.loader)} "
                          f"D {self.loss_disc:.4f} G {self.loss_gen:.4f}")
