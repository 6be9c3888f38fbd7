# Source: https://github.com/chenxijun1029/DeepFM_with_PyTorch/blob/master/model/DeepFM.py
# Report: DeepFM.forward() stashes its intermediate FM/deep tensors on self every call; variant keeps only detached copies for inspection
# Shape: the attributes hold .detach()ed tensors, so no graph survives the step; l1_reg's per-call sum over parameters and the float avg_acc EMA are not leaks either
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepFM(nn.Module):
    def __init__(self, feature_sizes, embedding_size=4, hidden_dims=(200, 200, 200), dropout=0.5, use_cuda=True):
        super().__init__()
        self.field_size = len(feature_sizes)
        self.embedding_size = embedding_size
        self.device = torch.device("cuda" if use_cuda and torch.cuda.is_available() else "cpu")
        self.bias = nn.Parameter(torch.zeros(1))
        self.first_order = nn.ModuleList([nn.Embedding(n, 1) for n in feature_sizes])
        self.second_order = nn.ModuleList([nn.Embedding(n, embedding_size) for n in feature_sizes])
        dims = [self.field_size * embedding_size] + list(hidden_dims)
        layers = []
        for i in range(1, len(dims)):
            layers += [nn.Linear(dims[i - 1], dims[i]), nn.BatchNorm1d(dims[i]), nn.ReLU(), nn.Dropout(dropout)]
        self.deep = nn.Sequential(*layers)
        self.avg_acc = None

    def l1_reg(self):
        reg_loss = torch.zeros(1, device=self.device)
        for name, param in self.named_parameters():
            if "bias" not in name:
                reg_loss = reg_loss + torch.sum(torch.abs(param))
        return reg_loss

    def forward(self, xi, xv):
        f1 = torch.cat([(emb(xi[:, i, :]).sum(1).t() * xv[:, i]).t()
                        for i, emb in enumerate(self.first_order)], 1)
        v = torch.stack([(emb(xi[:, i, :]).sum(1).t() * xv[:, i]).t()
                         for i, emb in enumerate(self.second_order)], dim=1)
        v = F.normalize(v, dim=1)
        s1 = v.sum(dim=1).pow(2.0)
        s2 = v.pow(2.0).sum(dim=1)
        f2 = 0.5 * (s1 - s2)
        self.xv = v.detach()
        self.s1 = s1.detach()
        self.s2 = s2.detach()
        deep_out = self.deep(torch.flatten(v, start_dim=1))
        self.f1 = f1.detach()
        self.f2 = f2.detach()
        self.deep_out = deep_out.detach()
        return f1.sum(1) + f2.sum(1) + deep_out.sum(1) + self.bias

    def fit(self, loader_train, loader_val, optimizer, epochs=1, print_every=100):
        model = self.train().to(self.device)
        criterion = nn.BCEWithLogitsLoss()
        val_iter = iter(loader_val)
        for epoch in range(epochs):
            for t, (xi, xv, y) in enumerate(loader_train):
                xi = xi.to(self.device, dtype=torch.long)
                xv = xv.to(self.device, dtype=torch.float32)
                y = y.to(self.device, dtype=torch.float32)
                total = model(xi, xv)
                reg = self.l1_reg()
                err = criterion(total, y)
                loss = err + 1e-6 * reg
                if not torch.isnan(loss):
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                if t % print_every == 0:
                    print(f"epoch {epoch} it {t} loss {loss.item():.4f} reg {reg.item():.4f}")
                    try:
                        self.check_accuracy(val_iter, model)
                    except StopIteration:
                        val_iter = iter(loader_val)
                    model.train()

    def check_accuracy(self, batches, model):
        model.eval()
        with torch.no_grad():
            xi, xv, y = next(batches)
            total = model(xi.to(self.device, dtype=torch.long), xv.to(self.device, dtype=torch.float32))
            preds = (torch.sigmoid(total) > 0.5).float()
            acc = float((preds == y.to(self.device)).sum()) / preds.size(0)
            self.avg_acc = acc if self.avg_acc is None else 0.9 * self.avg_acc + 0.1 * acc
            print(f"acc {100 * acc:.2f}% avg {100 * self.avg_acc:.2f}%")
