# Source: https://github.com/fastai/fastbook/blob/c3ceea7996010ece4ca12957352aee034dfbb00a/12_nlp_dive.ipynb
# Report: fastbook ch.12 (stateful LSTM language model on HUMAN_NUMBERS) explains that a model keeping its hidden state in self.h between batches must detach it, or backprop runs through every batch seen so far (memory and time grow with the stream); its LMModel5 does `self.h = [h_.detach() for h_ in h]` (see also fastbook PR #469 on the same class).
# Shape: the book's version: the LSTM state comes back into a local `h` and is stored on self only as `[h_.detach() for h_ in h]`; same training loop with reset at epoch start.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class LMModel5(nn.Module):
    def __init__(self, vocab_sz, n_hidden, n_layers, bs):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.LSTM(n_hidden, n_hidden, n_layers, batch_first=True)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.n_layers, self.n_hidden, self.bs = n_layers, n_hidden, bs
        self.reset()

    def reset(self):
        device = self.h_o.weight.device
        self.h = [
            torch.zeros(self.n_layers, self.bs, self.n_hidden, device=device)
            for _ in range(2)
        ]

    def forward(self, x):
        emb = self.i_h(x)
        res, h = self.rnn(emb, self.h)
        self.h = [h_.detach() for h_ in h]
        return self.h_o(res)


def loss_func(inp, targ):
    return F.cross_entropy(inp.view(-1, inp.size(-1)), targ.view(-1))


def fit(model, train_dl, valid_dl, n_epoch, lr=1e-2, device="cuda"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(n_epoch):
        model.train()
        model.reset()
        total, n = 0.0, 0
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            loss = loss_func(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * xb.size(0)
            n += xb.size(0)
        print(f"epoch {epoch}: train loss {total / n:.4f}")
