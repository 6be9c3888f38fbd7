# Source: https://github.com/LangranYUAN/recommendation-attack/blob/42ec10f756bfdbc63c3077039a5114b1ab2ef275/trainer.py
# Report: BPR recommender trainer (user/item embedding towers, softplus BPR loss + L2 term); the audited train_epoch sums loss.item() per batch and returns the float to train()
# Shape: the audited shape: the epoch sum takes loss.item(), so train_epoch returns a Python float and self.history holds floats only
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class MF(nn.Module):
    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        nn.init.normal_(self.user_emb.weight, std=0.1)
        nn.init.normal_(self.item_emb.weight, std=0.1)

    def bpr_forward(self, users, pos_items, neg_items):
        u = self.user_emb(users)
        p = self.item_emb(pos_items)
        n = self.item_emb(neg_items)
        l2_norm_sq = u.pow(2).sum(1) + p.pow(2).sum(1) + n.pow(2).sum(1)
        return u, p, n, l2_norm_sq


class BPRTrainer:
    def __init__(self, trainer_config):
        self.model = trainer_config["model"]
        self.optimizer = trainer_config["optimizer"]
        self.dataloader = trainer_config["dataloader"]
        self.reg_weight = trainer_config["reg_weight"]
        self.device = next(self.model.parameters()).device
        self.history = []

    def train_epoch(self):
        self.model.train()
        total_loss = 0
        for users, pos_items, neg_items in self.dataloader:
            users = users.to(self.device)
            pos_items = pos_items.to(self.device)
            neg_items = neg_items.to(self.device)
            self.optimizer.zero_grad()
            users_r, pos_r, neg_r, l2_norm_sq = self.model.bpr_forward(users, pos_items, neg_items)
            pos_scores = torch.sum(users_r * pos_r, dim=1)
            neg_scores = torch.sum(users_r * neg_r, dim=1)
            bpr_loss = F.softplus(neg_scores - pos_scores).mean()
            reg_loss = self.reg_weight * l2_norm_sq.mean()
            loss = bpr_loss + reg_loss
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
        return total_loss / len(self.dataloader)

    def train(self, epochs):
        for epoch in range(epochs):
            avg_loss = self.train_epoch()
            print(f"Epoch {epoch + 1}, Average Loss: {float(avg_loss):.5f}")
            self.history.append(avg_loss)
        return self.history
