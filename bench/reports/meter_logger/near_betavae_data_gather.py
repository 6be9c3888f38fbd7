# Source: https://github.com/1Konny/Beta-VAE/blob/977a1ece88e190dd8a556b4e2efb665f759d0772/solver.py
# Report: audit of the beta-VAE solver: every gather_step it hands recon_loss, KL terms and mean mu to a DataGather object that appends them to lists for the visdom curves, passing .data so nothing graph-attached is kept (correct)
# Shape: same hidden store (insert(**kwargs) appends to self.data lists, flushed per epoch), but scalars go in as .item() floats and vectors as .detach().cpu() copies
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def reconstruction_loss(x, x_recon, distribution="bernoulli"):
    if distribution == "bernoulli":
        return F.binary_cross_entropy_with_logits(x_recon, x, reduction="sum") / x.size(0)
    return F.mse_loss(torch.sigmoid(x_recon), x, reduction="sum") / x.size(0)


def kl_divergence(mu, logvar):
    klds = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
    return klds.sum(1).mean(0), klds.mean(0), klds.mean(1).mean(0)


class DataGather:
    KEYS = ("iter", "recon_loss", "total_kld", "dim_wise_kld", "mu")

    def __init__(self):
        self.data = {k: [] for k in self.KEYS}

    def insert(self, **kwargs):
        for key, value in kwargs.items():
            self.data[key].append(value)

    def flush(self):
        self.data = {k: [] for k in self.KEYS}


class Solver:
    def __init__(self, net, data_loader, args, device="cuda"):
        self.net = net.to(device)
        self.data_loader = data_loader
        self.device = device
        self.beta = args.beta
        self.gather_step = args.gather_step
        self.display_step = args.display_step
        self.optim = torch.optim.Adam(self.net.parameters(), lr=args.lr, betas=(0.9, 0.999))
        self.gather = DataGather()
        self.global_iter = 0

    def train_epoch(self, plot_lines):
        self.net.train()
        for x in self.data_loader:
            self.global_iter += 1
            x = x.to(self.device)
            x_recon, mu, logvar = self.net(x)
            recon_loss = reconstruction_loss(x, x_recon)
            total_kld, dim_wise_kld, mean_kld = kl_divergence(mu, logvar)
            loss = recon_loss + self.beta * total_kld
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()

            if self.global_iter % self.gather_step == 0:
                self.gather.insert(iter=self.global_iter, recon_loss=recon_loss.item(), total_kld=total_kld.item(), dim_wise_kld=dim_wise_kld.detach().cpu(), mu=mu.mean(0).detach().cpu())
            if self.global_iter % self.display_step == 0:
                print(f"[{self.global_iter}] recon {recon_loss.item():.3f} "
                      f"kld {total_kld.item():.3f} mean_kld {mean_kld.item():.3f}")
        plot_lines(self.gather.data)
        self.gather.flush()
