# Source: https://github.com/sharon200102/integration_tools/blob/47ede0ac04756d358d5afc1f3d413327b023e3f1/integration_tools/data_integration.py
# Report: audit of a microbiome data-integration VAE search: make_train_step() builds a closure that runs backward and returns the model's graph-attached loss dict; the repo discards the return value and sums validation losses under no_grad, this near-miss keeps that shape and logs the training loss as a Python float
# Shape: the closure still returns the graph-attached loss_dict, but the search loop only adds its .item(); validation sums tensors only inside torch.no_grad() and the history keeps .item() floats
# Expect: near-miss: must be silent
import itertools
import torch
import torch.nn as nn
import torch.nn.functional as F


class StandardVAE(nn.Module):
    def __init__(self, sizes, act):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-2], sizes[1:-1]):
            layers += [nn.Linear(a, b), act]
        self.encoder = nn.Sequential(*layers)
        self.mu = nn.Linear(sizes[-2], sizes[-1])
        self.logvar = nn.Linear(sizes[-2], sizes[-1])
        self.decoder = nn.Linear(sizes[-1], sizes[0])

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return {"recon": self.decoder(z), "input": x, "mu": mu, "logvar": logvar}

    def loss_function(self, out, klb):
        rec = F.mse_loss(out["recon"], out["input"], reduction="sum")
        kld = -0.5 * torch.sum(1 + out["logvar"] - out["mu"].pow(2) - out["logvar"].exp())
        return {"Reconstruction_Loss": rec, "KLD": kld, "loss": rec + klb * kld}


class MultipleVAE(nn.Module):
    def __init__(self, xy_vae, x_vae, y_vae, klb):
        super().__init__()
        self.xy_vae, self.x_vae, self.y_vae, self.klb = xy_vae, x_vae, y_vae, klb

    def forward(self, x, y):
        return {"xy": self.xy_vae(torch.cat([x, y], 1)), "x": self.x_vae(x), "y": self.y_vae(y)}

    def loss_function(self, fwd):
        parts = {k: getattr(self, k + "_vae").loss_function(v, self.klb) for k, v in fwd.items()}
        parts["total_loss"] = sum(p["loss"] for p in parts.values())
        return parts


def make_train_step(model, optimizer):
    def train_step(x, y):
        model.train()
        loss_dict = model.loss_function(model(x, y))
        loss_dict["total_loss"].backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss_dict
    return train_step


class DataIntegrator:
    def __init__(self, x_arch, y_arch, train_loader, val_loader, lrs, latents, klbs, patience=3):
        self.x_arch, self.y_arch = x_arch, y_arch
        self.train_loader, self.val_loader = train_loader, val_loader
        self.configs = list(itertools.product(lrs, latents, klbs))
        self.patience = patience

    def find_best_configuration(self, max_epochs=200):
        results = []
        for lr, latent, klb in self.configs:
            xy_arch = [self.x_arch[0] + self.y_arch[0]] + self.x_arch[1:]
            full_vae = MultipleVAE(StandardVAE(xy_arch + [latent], nn.Tanh()), StandardVAE(self.x_arch + [latent], nn.Tanh()),
                                   StandardVAE(self.y_arch + [latent], nn.Tanh()), klb)
            train_step = make_train_step(full_vae, torch.optim.Adam(full_vae.parameters(), lr=lr))
            val_history = []
            for epoch in range(max_epochs):
                epoch_train_loss = 0.0
                for batch in self.train_loader:
                    loss_dict = train_step(batch["FIELD0"], batch["FIELD1"])
                    epoch_train_loss += loss_dict["total_loss"].item()
                total_val = 0.0
                with torch.no_grad():
                    full_vae.eval()
                    for batch in self.val_loader:
                        parts = full_vae.loss_function(full_vae(batch["FIELD0"], batch["FIELD1"]))
                        total_val += sum(parts[k]["Reconstruction_Loss"] for k in ("xy", "x", "y"))
                val_history.append(total_val.item() / len(self.val_loader.dataset))
                print(f"lr={lr} latent={latent} epoch {epoch}: train {epoch_train_loss:.3f} val {val_history[-1]:.3f}")
                if len(val_history) > self.patience and min(val_history[-self.patience:]) > min(val_history):
                    break
            results.append({"lr": lr, "latent": latent, "klb": klb, "best_val": min(val_history)})
        return results
