# Source: https://github.com/znxlwm/pytorch-generative-model-collections/blob/0d183bb5ea2fbe069e1c6806c4a9a1fd8e81656f/infoGAN.py
# Report: audit (correct code): infoGAN.train() retains on the D and G backwards but ends each step with a plain info_loss.backward() and logs .item() floats; this is the variant it avoids, where retain_graph=True is pasted onto the last backward too and the info loss is logged as a tensor
# Shape: three backwards per step, all retaining; the last one's D(G(z)) graph is never freed because each step's info_loss tensor is appended to self.train_hist, so every step's retained graph stays alive
# Expect: TML006 line 61; TML001 line 60
import itertools
import time

import torch
import torch.nn as nn


class InfoGANTrainer:
    def __init__(self, G, D, z_dim=62, n_disc=10, n_cont=2, lr=2e-4, device="cuda"):
        self.G, self.D, self.device = G.to(device), D.to(device), device
        self.z_dim, self.n_disc, self.n_cont = z_dim, n_disc, n_cont
        self.G_optimizer = torch.optim.Adam(G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.D_optimizer = torch.optim.Adam(D.parameters(), lr=lr, betas=(0.5, 0.999))
        self.info_optimizer = torch.optim.Adam(
            itertools.chain(G.parameters(), D.parameters()), lr=lr, betas=(0.5, 0.999))
        self.BCE_loss, self.CE_loss, self.MSE_loss = nn.BCELoss(), nn.CrossEntropyLoss(), nn.MSELoss()
        self.train_hist = {"D_loss": [], "G_loss": [], "info_loss": [], "per_epoch_time": []}

    def sample_codes(self, bs):
        z = torch.rand(bs, self.z_dim, device=self.device)
        idx = torch.randint(0, self.n_disc, (bs,), device=self.device)
        disc = torch.nn.functional.one_hot(idx, self.n_disc).float()
        cont = torch.empty(bs, self.n_cont, device=self.device).uniform_(-1, 1)
        return z, disc, cont, idx

    def train(self, data_loader, epochs):
        self.D.train()
        for epoch in range(epochs):
            self.G.train()
            start = time.time()
            for it, (x, _) in enumerate(data_loader):
                x = x.to(self.device)
                bs = x.size(0)
                y_real = torch.ones(bs, 1, device=self.device)
                y_fake = torch.zeros(bs, 1, device=self.device)
                z, disc, cont, idx = self.sample_codes(bs)

                self.D_optimizer.zero_grad()
                D_real, _, _ = self.D(x)
                fake = self.G(z, cont, disc)
                D_fake, _, _ = self.D(fake)
                D_loss = self.BCE_loss(D_real, y_real) + self.BCE_loss(D_fake, y_fake)
                self.train_hist["D_loss"].append(D_loss.item())
                D_loss.backward(retain_graph=True)
                self.D_optimizer.step()

                self.G_optimizer.zero_grad()
                fake = self.G(z, cont, disc)
                D_fake, D_cont, D_disc = self.D(fake)
                G_loss = self.BCE_loss(D_fake, y_real)
                self.train_hist["G_loss"].append(G_loss.item())
                G_loss.backward(retain_graph=True)
                self.G_optimizer.step()

                info_loss = self.CE_loss(D_disc, idx) + self.MSE_loss(D_cont, cont)
                self.train_hist["info_loss"].append(info_loss)  # expect: TML001
                info_loss.backward(retain_graph=True)  # expect: TML006
                self.info_optimizer.step()

                if (it + 1) % 100 == 0:
                    print(f"[{epoch + 1}] {it + 1} D {D_loss.item():.4f} G {G_loss.item():.4f} info {info_loss.item():.4f}")
            self.train_hist["per_epoch_time"].append(time.time() - start)
        return self.train_hist
