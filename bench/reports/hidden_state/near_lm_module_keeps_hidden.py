# Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887
# Report: the fastbook chapter-12 language models keep the RNN hidden state on the module (self.h) between batches and detach it after every forward; without the detach each batch's graph hangs off all earlier batches, so backward walks (and memory keeps) the whole history
# Shape: same stateful LSTM language model, but forward stores only the detached (h, c) on self, so each batch's graph ends at the batch boundary and a plain backward() works
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulLM(nn.Module):
    def __init__(self, vocab_size, n_hidden, n_layers, batch_size):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, n_hidden)
        self.rnn = nn.LSTM(n_hidden, n_hidden, n_layers, batch_first=True)
        self.head = nn.Linear(n_hidden, vocab_size)
        self.n_layers, self.n_hidden, self.bs = n_layers, n_hidden, batch_size
        self.h = None

    def reset(self):
        device = self.head.weight.device
        zeros = torch.zeros(self.n_layers, self.bs, self.n_hidden, device=device)
        self.h = (zeros, zeros.clone())

    def forward(self, tokens):
        emb = self.embed(tokens)
        out, h = self.rnn(emb, self.h)
        self.h = tuple(s.detach() for s in h)
        return self.head(out)


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    model.reset()
    total, batches = 0.0, 0
    for xb, yb in loader:
        total += lm_loss(model(xb.to(device)), yb.to(device)).item()
        batches += 1
    return total / max(batches, 1)


def fit(model, train_loader, valid_loader, epochs=10, lr=3e-3, device="cuda"):
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        model.train()
        model.reset()
        running, batches = 0.0, 0
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = lm_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            running += loss.item()
            batches += 1
        history.append({
            "epoch": epoch,
            "train_loss": running / max(batches, 1),
            "valid_loss": evaluate(model, valid_loader, device),
        })
    return history
