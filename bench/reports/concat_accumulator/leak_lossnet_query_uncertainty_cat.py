# Source: https://github.com/lundha/Active-Learning/blob/master/query_strategies/Learning_loss_strategy.py
# Report: the learning-loss query step scores the whole unlabeled pool by growing two GPU tensors with torch.cat on every batch
# Shape: uncertainty / embedding start as empty CUDA tensors before the loop and are rebuilt as cat((acc, batch)) each batch: quadratic copying, the whole pool's embeddings on the GPU, peak twice the accumulator
# Expect: TML008 lines 58, 59
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
        embedding = np.asarray(embedding.cpu())
        keep = int(len(uncertainty) * self.blend)
        top = np.argsort(uncertainty.numpy())[:keep]
        self.blend *= 0.9
        return self.pick_centers(embedding[top], n_query)

    def pick_centers(self, emb, k):
        return np.random.choice(len(emb), size=k, replace=False)

    def score_pool(self, loader):
        self.classifier.eval()
        self.loss_net.eval()
        uncertainty = torch.tensor([]).to(self.device)
        embedding = torch.tensor([]).to(self.device)
        with torch.no_grad():
            for x, _ in loader:
                x = x.to(self.device).float()
                _, emb, features = self.classifier(x)
                pred_loss = self.loss_net(features)
                pred_loss = pred_loss.view(pred_loss.size(0))
                uncertainty = torch.cat((uncertainty, pred_loss), 0)  # expect: TML008
                embedding = torch.cat((embedding, emb), 0)  # expect: TML008
        return uncertainty.cpu(), embedding
