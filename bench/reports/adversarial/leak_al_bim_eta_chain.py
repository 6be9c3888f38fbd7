# Source: https://github.com/MarioCarvalhoBr/dalmax-framework-deep-active-learning-python/blob/main/dalmax/query_strategies/adversarial_bim.py
# Report: BIM-based active-learning query: for every unlabeled batch an input perturbation eta is grown for max_iter steps and its L2 size ranks the pool
# Shape: eta = eta + eps * grad.sign() without .detach(): eta stays graph-attached to the previous step's eta, so each step's node links to the last (loop-carried graph chain per batch)
# Expect: TML005 line 31
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm


class BIMQuery:
    def __init__(self, pool, net, eps=0.05, max_iter=10, batch_size=64, device=None):
        self.pool = pool
        self.net = net
        self.eps = eps
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def _perturbation_size(self, x_batch):
        x_batch = x_batch.to(self.device)
        with torch.no_grad():
            logits0, _ = self.net.clf(x_batch)
            y0 = logits0.argmax(dim=1)
        eta = torch.zeros_like(x_batch, requires_grad=True)
        for _ in range(self.max_iter):
            out, _ = self.net.clf(x_batch + eta)
            loss = F.cross_entropy(out, y0, reduction="sum")
            grad = torch.autograd.grad(loss, eta)[0]
            eta = eta + self.eps * grad.sign()  # expect: TML005
            with torch.no_grad():
                if (out.argmax(dim=1) != y0).all():
                    break
        with torch.no_grad():
            dist = (eta * eta).flatten(start_dim=1).sum(dim=1)
        return dist.cpu().numpy()

    def query(self, n):
        unlabeled_idxs, unlabeled_data = self.pool.get_unlabeled_data()
        self.net.clf.to(self.device)
        self.net.clf.eval()
        loader = DataLoader(unlabeled_data, batch_size=self.batch_size, shuffle=False)
        dist = np.zeros(len(unlabeled_idxs), dtype=np.float32)
        offset = 0
        for x_batch, _, _ in tqdm(loader, total=len(loader)):
            d = self._perturbation_size(x_batch)
            dist[offset:offset + len(d)] = d
            offset += len(d)
        return unlabeled_idxs[dist.argsort()[:n]]
