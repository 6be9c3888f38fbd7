# Source: https://github.com/thuml/Anomaly-Transformer/blob/main/solver.py
# Report: Solver.vali() and Solver.test() put the model in eval mode and run every window through it; fixed variant scores windows under torch.no_grad()
# Shape: the eval loops run inside with torch.no_grad() (vali) and under @torch.no_grad() (anomaly_energy); training keeps its two backward passes where only the first retains the graph
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


def kl_term(p, q):
    res = p * (torch.log(p + 1e-4) - torch.log(q + 1e-4))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


def discrepancy(series, prior, win_size):
    series_loss = 0.0
    prior_loss = 0.0
    for u in range(len(prior)):
        norm_prior = prior[u] / prior[u].sum(dim=-1, keepdim=True).repeat(1, 1, 1, win_size)
        series_loss += torch.mean(kl_term(series[u], norm_prior.detach())) + torch.mean(kl_term(norm_prior.detach(), series[u]))
        prior_loss += torch.mean(kl_term(norm_prior, series[u].detach())) + torch.mean(kl_term(series[u].detach(), norm_prior))
    return series_loss / len(prior), prior_loss / len(prior)


class Solver:
    def __init__(self, model, train_loader, val_loader, k=3.0, win_size=100, lr=1e-4):
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_loader, self.val_loader = train_loader, val_loader
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.criterion = nn.MSELoss()
        self.k, self.win_size = k, win_size

    def train_epoch(self):
        self.model.train()
        loss1_list = []
        for i, (window, _) in enumerate(self.train_loader):
            self.optimizer.zero_grad()
            x = window.float().to(self.device)
            output, series, prior, _ = self.model(x)
            series_loss, prior_loss = discrepancy(series, prior, self.win_size)
            rec_loss = self.criterion(output, x)
            loss1_list.append((rec_loss - self.k * series_loss).item())
            loss1 = rec_loss - self.k * series_loss
            loss2 = rec_loss + self.k * prior_loss
            loss1.backward(retain_graph=True)  # minimax: first phase keeps the graph for the second
            loss2.backward()
            self.optimizer.step()
        return np.average(loss1_list)

    def vali(self, loader):
        self.model.eval()
        loss_1, loss_2 = [], []
        with torch.no_grad():
            for i, (window, _) in enumerate(loader):
                x = window.float().to(self.device)
                output, series, prior, _ = self.model(x)
                series_loss, prior_loss = discrepancy(series, prior, self.win_size)
                rec_loss = self.criterion(output, x)
                loss_1.append((rec_loss - self.k * series_loss).item())
                loss_2.append((rec_loss + self.k * prior_loss).item())
        return np.average(loss_1), np.average(loss_2)

    def fit(self, epochs):
        for epoch in range(epochs):
            train_loss = self.train_epoch()
            v1, v2 = self.vali(self.val_loader)
            print(f"epoch {epoch + 1}: train {train_loss:.6f} vali {v1:.6f} / {v2:.6f}")

    @torch.no_grad()
    def anomaly_energy(self, loader, temperature=50):
        self.model.eval()
        per_point = nn.MSELoss(reduction="none")
        energies = []
        for window, _ in loader:
            x = window.float().to(self.device)
            output, series, prior, _ = self.model(x)
            loss = torch.mean(per_point(x, output), dim=-1)
            score = 0.0
            for u in range(len(prior)):
                norm_prior = prior[u] / prior[u].sum(dim=-1, keepdim=True).repeat(1, 1, 1, self.win_size)
                score += kl_term(series[u], norm_prior.detach()) + kl_term(norm_prior, series[u].detach())
            metric = torch.softmax(-score * temperature, dim=-1)
            energies.append((metric * loss).detach().cpu().numpy())
        return np.concatenate(energies, axis=0).reshape(-1)
