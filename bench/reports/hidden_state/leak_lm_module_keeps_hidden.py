# Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887
# Report: the fastbook chapter-12 language models keep the RNN hidden state on the module (self.h) between batches and detach it after every forward; without the detach each batch's graph hangs off all earlier batches, so backward walks (and memory keeps) the whole history
# Shape: a stateful LSTM language model rebinds self.h from its own previous value inside forward without detaching; the training loop then needs retain_graph=True to get past the second batch
# Expect: TML005 line 26; TML019 line 26; TML006 line 58
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
        out, self.h = self.rnn(emb, self.h)  # expect: TML005, TML019
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
            # without this the second batch raised "backward through the graph a second time"
            loss.backward(retain_graph=True)  # expect: TML006
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
