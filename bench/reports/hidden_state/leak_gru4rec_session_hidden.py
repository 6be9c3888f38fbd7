# Source: https://github.com/kingmbc/GRU4REC-pytorch/blob/01432000565bdb3a160808e824ddfc30243527e8/lib/trainer.py
# Report: session-parallel GRU4Rec trainer carries the GRU hidden state from one mini-batch to the next and detaches it after reset_hidden(); here the .detach() is dropped and the resulting "backward through the graph a second time" error is silenced with retain_graph=True
# Shape: hidden leaves reset_hidden() still attached, is fed back into self.model(input, hidden); every step's graph links to all previous steps and retain_graph keeps their buffers
# Expect: TML005 line 64; TML006 line 68
import numpy as np
import torch
from torch import nn


class GRU4REC(nn.Module):
    def __init__(self, n_items, hidden_size, num_layers=1, batch_size=50, embedding_dim=64):
        super().__init__()
        self.num_layers, self.batch_size, self.hidden_size = num_layers, batch_size, hidden_size
        self.look_up = nn.Embedding(n_items, embedding_dim)
        self.gru = nn.GRU(embedding_dim, hidden_size, num_layers)
        self.h2o = nn.Linear(hidden_size, n_items)

    def forward(self, input, hidden):
        embedded = self.look_up(input.unsqueeze(0))
        output, hidden = self.gru(embedded, hidden)
        logit = torch.tanh(self.h2o(output.view(-1, output.size(-1))))
        return logit, hidden

    def init_hidden(self, device):
        return torch.zeros(self.num_layers, self.batch_size, self.hidden_size, device=device)


class TOP1Loss(nn.Module):
    def forward(self, logit):
        diff = -(logit.diag().view(-1, 1).expand_as(logit) - logit)
        return (torch.sigmoid(diff).mean() + torch.sigmoid(logit ** 2).mean())


class SessionParallelLoader:
    """Yields (input, target, mask) where mask lists the rows whose session just ended."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)


class Trainer:
    def __init__(self, model, train_data, optim, loss_func, device):
        self.model, self.train_data = model, train_data
        self.optim, self.loss_func, self.device = optim, loss_func, device

    def _train_epoch(self, epoch):
        self.model.train()
        losses = []

        def reset_hidden(hidden, mask):
            """Zero the hidden rows of sessions that just ended."""
            if len(mask) != 0:
                hidden[:, mask, :] = 0
            return hidden

        hidden = self.model.init_hidden(self.device)
        for input, target, mask in SessionParallelLoader(self.train_data):
            input, target = input.to(self.device), target.to(self.device)
            self.optim.zero_grad()
            hidden = reset_hidden(hidden, mask)
            logit, hidden = self.model(input, hidden)  # expect: TML005
            logit_sampled = logit[:, target.view(-1)]
            loss = self.loss_func(logit_sampled)
            losses.append(loss.item())
            loss.backward(retain_graph=True)  # expect: TML006
            self.optim.step()
        return np.mean(losses)

    def train(self, n_epochs):
        for epoch in range(n_epochs):
            print(f"epoch {epoch}: train loss {self._train_epoch(epoch):.4f}")

    def evaluate(self, eval_data, k=20):
        self.model.eval()
        losses, recalls = [], []
        with torch.no_grad():
            hidden = self.model.init_hidden(self.device)
            for input, target, mask in SessionParallelLoader(eval_data):
                input, target = input.to(self.device), target.to(self.device)
                logit, hidden = self.model(input, hidden)
                loss = self.loss_func(logit[:, target.view(-1)])
                topk = torch.topk(logit, k, dim=-1).indices
                recalls.append((topk == target.view(-1, 1)).any(dim=1).float().mean().item())
                losses.append(loss.item())
        return np.mean(losses), np.mean(recalls)
