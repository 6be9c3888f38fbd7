# Source: https://github.com/g-fiche/Mesh-VQ-VAE/blob/3c672bb1f2e3256789a3d389c117457f2ad9855b/mesh_vq_vae/train/train.py
# Report: MeshVQVAE_Train.test() (run by test_mesh_vqvae.py) puts the model in eval mode and loops over the validation loader without no_grad; fit()'s periodic validation in the same class is wrapped in torch.no_grad()
# Shape: test() calls self.model(data) per batch after self.model.eval() with grad enabled: every batch builds and saves the VQ-VAE activations for a backward that never comes (higher peak per batch; errors are reduced with .item())
# Expect: TML003 line 85
from statistics import mean

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader


def v2v(x, x_recon):
    return torch.sqrt(((x - x_recon) ** 2).sum(-1)).mean()


class MeshVQVAE(nn.Module):
    def __init__(self, n_vertices=6890, hidden=256, n_codes=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.codebook = nn.Embedding(n_codes, hidden)
        self.decoder = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def forward(self, x):
        z = self.encoder(x)
        dist = torch.cdist(z.flatten(0, 1), self.codebook.weight)
        idx = dist.argmin(-1)
        q = self.codebook(idx).view_as(z)
        vq_loss = ((q - z.detach()) ** 2).mean() + 0.25 * ((q.detach() - z) ** 2).mean()
        q = z + (q - z).detach()
        probs = torch.bincount(idx, minlength=self.codebook.num_embeddings).float() / idx.numel()
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
        return vq_loss, self.decoder(q), perplexity


class MeshVQVAETrain:
    def __init__(self, model, training_data, validation_data, cfg):
        self.model = model
        self.device = torch.device("cuda")
        self.model.to(self.device)
        self.training_loader = DataLoader(training_data, batch_size=cfg["batch"], shuffle=True, drop_last=True)
        self.validation_loader = DataLoader(validation_data, batch_size=cfg["batch"], shuffle=True, drop_last=True)
        self.optimizer = optim.Adam(self.model.parameters(), lr=cfg["lr"])
        self.train_steps = cfg["train_steps"]
        self.eval_steps = cfg["eval_steps"]
        self.epochs = cfg["epochs"]
        self.train_loss, self.train_perplexity, self.train_v2v = [], [], []
        self.validation_loss, self.validation_v2v = [], []

    def fit(self):
        self.model.train()
        total_updates = len(self.training_loader) * self.epochs
        i = 0
        while i < total_updates:
            for data in self.training_loader:
                data = data.to(self.device)
                self.optimizer.zero_grad()
                vq_loss, data_recon, perplexity = self.model(data)
                recon_error = v2v(data, data_recon)
                loss = recon_error + vq_loss
                loss.backward()
                self.train_loss.append(loss.item())
                self.train_perplexity.append(perplexity.item())
                self.train_v2v.append(1000 * recon_error.item())
                self.optimizer.step()
                i += 1
                if i % self.train_steps == 0:
                    with torch.no_grad():
                        for j, val_data in enumerate(self.validation_loader):
                            if j >= self.eval_steps:
                                break
                            val_data = val_data.to(self.device)
                            vq_loss_val, val_recon, _ = self.model(val_data)
                            recon_error_val = v2v(val_data, val_recon)
                            self.validation_loss.append((recon_error_val + vq_loss_val).item())
                            self.validation_v2v.append(1000 * recon_error_val.item())
                    print(f"iter {i}: train v2v {mean(self.train_v2v[-self.train_steps:]):.2f}, "
                          f"val v2v {mean(self.validation_v2v[-self.eval_steps:]):.2f}")

    def test(self):
        self.model.eval()
        recon_list = []
        for data in self.validation_loader:
            data = data.to(self.device)
            vq_loss, data_recon, perplexity = self.model(data)  # expect: TML003
            recon_error = v2v(data, data_recon)
            recon_list.append(1000 * recon_error.item())
        print(f"Average V2V error: {mean(recon_list)}")
        return data_recon[:4].cpu()
