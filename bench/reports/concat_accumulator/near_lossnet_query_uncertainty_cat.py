# Source: https://github.com/lundha/Active-Learning/blob/master/query_strategies/Learning_loss_strategy.py
# Report: fixed learning-loss query step: per-batch scores and embeddings are moved to the CPU into plain lists and concatenated once after the pool loop
# Shape: chunks appended as .cpu() copies under no_grad, one torch.cat after the loop; nothing grows on the GPU and no quadratic copy
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class LossNet(nn.Module):
    def __init__(self, in_dims=(64, 128, 256, 512), hidden=128):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(d, hidden) for d in in_dims])
        self.out = nn.Linear(hidden * len(in_dims), 1)

    def forward(self, features):
        pooled = [torch.relu(h(f.mean(dim=(2, 3)))) for h, f in zip(self.heads, features)]
        return self.out(torch.cat(pooled, dim=1))


class LearningLossStrategy:
    def __init__(self, pool, classifier, args):
        self.pool = pool
        self.args = args
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.classifier = classifier.to(self.device)
        self.loss_net = LossNet().to(self.device)
        self.blend = 1.0

    def make_loader(self, X, Y):
        return DataLoader(list(zip(X, Y)), batch_size=self.args["batch_size"], shuffle=False)

    def query(self, n_query):
        idx_ulb = self.pool.unlabeled_indices()
        loader = self.make_loader(self.pool.X[idx_ulb], self.pool.Y[idx_ulb])
        uncertainty, embedding = self.score_pool(loader)
        embedding = np.asarray(embedding)
        keep = int(len(uncertainty) * self.blend)
        top = np.argsort(uncertainty.numpy())[:keep]
        self.blend *= 0.9
        return self.pick_centers(embedding[top], n_query)

    def pick_centers(self, emb, k):
        return np.random.choice(len(emb), size=k, replace=False)

    def score_pool(self, loader):
        self.classifier.eval()
        self.loss_net.eval()
        score_chunks = []
        emb_chunks = []
        with torch.no_grad():
            for x, _ in loader:
                x = x.to(self.device).float()
                _, emb, features = self.classifier(x)
                pred_loss = self.loss_net(features)
                pred_loss = pred_loss.view(pred_loss.size(0))
                score_chunks.append(pred_loss.cpu())
                emb_chunks.append(emb.cpu())
        uncertainty = torch.cat(score_chunks, 0)
        embedding = torch.cat(emb_chunks, 0)
        return uncertainty, embedding
