# Source: https://github.com/kuc2477/pytorch-ewc/issues/5
# Report: EWC Fisher estimation runs out of CUDA memory on a ResNet-50 at "loglikelihoods.append(output[:, target])" (same report on thuyngch/Overcoming-Catastrophic-Forgetting#4).
# Shape: estimate_fisher appends the attached log-likelihoods of every batch to a list bound before the loop and only differentiates them after the loop, so the forward graphs (all activations) of sample_size/batch_size batches are alive at once.
# Expect: TML001 line 37
from functools import reduce

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd
from torch.utils.data import DataLoader


class MLP(nn.Module):
    def __init__(self, input_size, output_size, hidden_size=400, n_hidden=2, lamda=40):
        super().__init__()
        self.lamda = lamda
        layers = [nn.Linear(input_size, hidden_size), nn.ReLU(), nn.Dropout(0.2)]
        for _ in range(n_hidden):
            layers += [nn.Linear(hidden_size, hidden_size), nn.ReLU(), nn.Dropout(0.5)]
        layers.append(nn.Linear(hidden_size, output_size))
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        return reduce(lambda h, layer: layer(h), self.layers, x)

    def _device(self):
        return next(self.parameters()).device

    def estimate_fisher(self, dataset, sample_size, batch_size=32):
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
        device = self._device()
        loglikelihoods = []
        for x, y in loader:
            x = x.view(batch_size, -1).to(device)
            y = y.to(device)
            loglikelihoods.append(  # expect: TML001
                F.log_softmax(self(x), dim=1)[range(batch_size), y]
            )
            if len(loglikelihoods) >= sample_size // batch_size:
                break
        loglikelihoods = torch.cat(loglikelihoods).unbind()
        grads = zip(*[autograd.grad(l, self.parameters(), retain_graph=(i < len(loglikelihoods)))
                      for i, l in enumerate(loglikelihoods, 1)])
        fisher = [(torch.stack(gs) ** 2).mean(0) for gs in grads]
        names = [n.replace(".", "__") for n, _ in self.named_parameters()]
        return {n: f.detach() for n, f in zip(names, fisher)}

    def consolidate(self, fisher):
        for n, p in self.named_parameters():
            n = n.replace(".", "__")
            self.register_buffer(f"{n}_mean", p.data.clone())
            self.register_buffer(f"{n}_fisher", fisher[n].data.clone())

    def ewc_loss(self):
        try:
            losses = []
            for n, p in self.named_parameters():
                n = n.replace(".", "__")
                mean, fisher = getattr(self, f"{n}_mean"), getattr(self, f"{n}_fisher")
                losses.append((fisher * (p - mean) ** 2).sum())
            return (self.lamda / 2) * sum(losses)
        except AttributeError:
            return torch.zeros(1, device=self._device())


def train(model, train_datasets, epochs_per_task=10, batch_size=64, fisher_sample_size=1024, lr=1e-3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, weight_decay=1e-5)
    device = model._device()
    model.train()
    for task, train_dataset in enumerate(train_datasets, 1):
        for epoch in range(1, epochs_per_task + 1):
            loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True)
            for x, y in loader:
                x, y = x.view(len(x), -1).to(device), y.to(device)
                optimizer.zero_grad()
                scores = model(x)
                ce_loss = criterion(scores, y)
                ewc_loss = model.ewc_loss()
                loss = ce_loss + ewc_loss
                loss.backward()
                optimizer.step()
            print(f"task {task} epoch {epoch}: ce {float(ce_loss):.4f} ewc {float(ewc_loss):.4f}")
        if task < len(train_datasets):
            model.consolidate(model.estimate_fisher(train_dataset, fisher_sample_size))
