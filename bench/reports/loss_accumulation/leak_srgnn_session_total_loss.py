# Source: https://github.com/CRIPAC-DIG/SR-GNN/blob/e21cfa431f74c25ae6e4ae9261deefe11d1cb488/pytorch_code/model.py
# Report: audit of SR-GNN's train_test(): the scores come back from the module-level forward() helper as a (targets, scores) tuple, the loss is model.loss_function(scores, targets), and the loop does total_loss += loss on the attached tensor for the whole epoch before printing it
# Shape: a helper returns the attached session scores; the caller builds the loss and sums it into a running total defined before the batch loop, printed once per epoch
# Expect: TML001 line 56
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SessionGraph(nn.Module):
    def __init__(self, n_node, hidden=100, lr=1e-3, l2=1e-5, step=1):
        super().__init__()
        self.embedding = nn.Embedding(n_node, hidden)
        self.gnn = nn.GRUCell(2 * hidden, hidden)
        self.w_in, self.w_out = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.attn = nn.Linear(hidden, 1)
        self.step = step
        self.loss_function = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=l2)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3, gamma=0.1)

    def forward(self, items, A):
        h = self.embedding(items)
        n = h.size(1)
        for _ in range(self.step):
            msg = torch.cat([A[:, :, :n] @ self.w_in(h), A[:, :, n:] @ self.w_out(h)], dim=-1)
            h = self.gnn(msg.flatten(0, 1), h.flatten(0, 1)).view_as(h)
        return h

    def compute_scores(self, seq_hidden, mask):
        weights = torch.sigmoid(self.attn(seq_hidden)).squeeze(-1) * mask.float()
        session = (weights.unsqueeze(-1) * seq_hidden).sum(1)
        return session @ self.embedding.weight[1:].t()


def forward(model, i, data, device="cuda"):
    alias, A, items, mask, targets = data.get_slice(i)
    items, A = torch.as_tensor(items, device=device), torch.as_tensor(A, device=device).float()
    alias, mask = torch.as_tensor(alias, device=device), torch.as_tensor(mask, device=device)
    hidden = model(items, A)
    seq_hidden = torch.stack([hidden[k][alias[k]] for k in range(len(alias))])
    return targets, model.compute_scores(seq_hidden, mask)


def train_test(model, train_data, test_data, batch_size=100, device="cuda"):
    model.train()
    total_loss = 0.0
    slices = train_data.generate_batch(batch_size)
    for j, i in enumerate(slices):
        model.optimizer.zero_grad()
        targets, scores = forward(model, i, train_data)
        loss = model.loss_function(scores, torch.as_tensor(targets, device=device) - 1)
        loss.backward()
        model.optimizer.step()
        total_loss += loss  # expect: TML001
        if j % (len(slices) // 5 + 1) == 0:
            print(f"[{j}/{len(slices)}] loss: {loss.item():.4f}")
    model.scheduler.step()
    print(f"\tLoss:\t{total_loss:.3f}")

    model.eval()
    hit, mrr = [], []
    with torch.no_grad():
        for i in test_data.generate_batch(batch_size):
            targets, scores = forward(model, i, test_data)
            top20 = scores.topk(20)[1].cpu().numpy()
            for score, target in zip(top20, targets):
                rank = np.where(score == target - 1)[0]
                hit.append(len(rank) > 0)
                mrr.append(1.0 / (rank[0] + 1) if len(rank) else 0.0)
    return np.mean(hit) * 100, np.mean(mrr) * 100
