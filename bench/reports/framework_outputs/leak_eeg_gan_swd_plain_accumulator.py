# Source: https://github.com/Samuel-Boehm/EEG-GAN/blob/a0b5b94c422d6fc8f805e80cd91e0b94c42c4b27/src/metrics/SWD.py
# Report: audit of an EEG GAN (Lightning, manual optimization): every training_step feeds the real batch and the live generator output X_fake to a sliced-Wasserstein metric whose update appends real.cpu() / fake.cpu() until the epoch-end compute; the repo's SWD is a torchmetrics Metric (update runs with grad disabled), this is the plain accumulator it avoided, where fake.cpu() keeps X_fake's autograd history, pinning each step's generator activations on the GPU for the whole epoch
# Shape: accumulator class with real/fake lists, update() moving both to the CPU, compute() projecting and sorting, reset() at epoch end; GAN.training_step generates a fake batch, trains the critic every step (X_fake.detach()), the generator every n_critic steps, then updates the metric
# Expect: TML001 line 73
import torch
from lightning import LightningModule
from torch import autograd
from torch.nn.functional import softplus


class SlicedWasserstein:
    def __init__(self, n_projections=1000, n_repetitions=10):
        self.n_projections, self.n_repetitions = n_projections, n_repetitions
        self.real, self.fake = [], []

    def update(self, real, fake):
        self.real.append(real.cpu())
        self.fake.append(fake.cpu())

    def compute(self):
        real = torch.cat(self.real).flatten(1)
        fake = torch.cat(self.fake).flatten(1)
        dists = []
        for _ in range(self.n_repetitions):
            w = torch.randn(real.shape[1], self.n_projections)
            w /= w.norm(dim=0, keepdim=True)
            dists.append((torch.sort(real @ w, 0)[0] - torch.sort(fake @ w, 0)[0]).abs().mean())
        return torch.stack(dists).mean()

    def reset(self):
        self.real, self.fake = [], []


class GAN(LightningModule):
    def __init__(self, generator, critic, n_epochs_critic=5, lambda_gp=10.0, lr=1e-4):
        super().__init__()
        self.generator, self.critic = generator, critic
        self.n_epochs_critic, self.lambda_gp, self.lr = n_epochs_critic, lambda_gp, lr
        self.automatic_optimization = False
        self.swd = SlicedWasserstein()

    def gradient_penalty(self, real, fake, y_fake):
        alpha = torch.rand(real.size(0), *([1] * (real.dim() - 1)), device=self.device)
        interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        out = self.critic(interp, y_fake)
        grads = autograd.grad(out, interp, torch.ones_like(out), create_graph=True)[0]
        return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()

    def training_step(self, batch, batch_idx):
        X_real, y_real = batch
        optim_g, optim_c = self.optimizers()
        X_fake, y_fake = self.generator.generate(X_real.shape[0])

        self.toggle_optimizer(optim_c)
        gp = self.lambda_gp * self.gradient_penalty(X_real, X_fake.detach(), y_fake)
        c_loss = softplus(-self.critic(X_real, y_real)).mean() + softplus(self.critic(X_fake.detach(), y_fake)).mean() + gp
        self.manual_backward(c_loss)
        optim_c.step()
        optim_c.zero_grad()
        self.untoggle_optimizer(optim_c)

        if (batch_idx + 1) % self.n_epochs_critic == 0:
            self.toggle_optimizer(optim_g)
            g_loss = softplus(-self.critic(X_fake, y_fake)).mean()
            self.manual_backward(g_loss)
            optim_g.step()
            optim_g.zero_grad()
            self.untoggle_optimizer(optim_g)
            self.log("generator loss", g_loss.item(), on_epoch=True)

        self.log("critic loss", c_loss.item(), on_epoch=True)
        self.log("gradient penalty", gp.item(), on_epoch=True)
        self.swd.update(X_real, X_fake)  # expect: TML001

    def on_train_epoch_end(self):
        self.log("sliced wasserstein distance", self.swd.compute().item())
        self.swd.reset()

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=self.lr, betas=(0.0, 0.99))
        opt_c = torch.optim.Adam(self.critic.parameters(), lr=self.lr, betas=(0.0, 0.99))
        return opt_g, opt_c
