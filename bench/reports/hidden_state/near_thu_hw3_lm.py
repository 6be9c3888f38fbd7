# Source: https://github.com/chyelang/hw3_language_model/blob/master/main.py
# Report: course homework (PTB word LM with truncated BPTT): the hidden state carried from batch to batch is passed through repackage_hidden() before every forward.
# Shape: hidden is bound before the batch loop and fed back each step; repackage_hidden() detaches it, so each step's graph stops at the batch boundary.
# Expect: near-miss: must be silent
import math
import torch
import torch.nn as nn
import torch.optim as optim


class LMModel(nn.Module):
    def __init__(self, nvoc, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(nvoc, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, nvoc)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, x, hidden):
        emb = self.drop(self.encoder(x))
        out, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(out)), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, max_sql, device):
    seq_len = min(max_sql, source.size(0) - i - 1)
    data = source[i:i + seq_len, :]
    target = source[i + 1:i + 1 + seq_len, :].reshape(-1)
    return data.to(device), target.to(device)


def evaluate(model, valid, nvoc, bsz, max_sql, criterion, device):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(bsz)
    with torch.no_grad():
        for i in range(0, valid.size(0) - 1, max_sql):
            data, targets = get_batch(valid, i, max_sql, device)
            output, hidden = model(data, hidden)
            total_loss += len(data) * criterion(output.view(-1, nvoc), targets).item()
            hidden = repackage_hidden(hidden)
    return total_loss / len(valid)


def train(model, train_data, nvoc, bsz, max_sql, criterion, opt, clip, device):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(bsz)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, max_sql)):
        data, targets = get_batch(train_data, i, max_sql, device)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, nvoc), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        total_loss += loss.item()
        if batch % 200 == 0 and batch > 0:
            cur = total_loss / 200
            print(f"batch {batch} | loss {cur:5.2f} | ppl {math.exp(cur):8.2f}")
            total_loss = 0.0


def main(train_data, valid_data, nvoc, epochs=3, bsz=20, max_sql=35, device="cuda"):
    model = LMModel(nvoc, 200, 200, 2).to(device)
    criterion = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, epochs + 1):
        train(model, train_data, nvoc, bsz, max_sql, criterion, opt, 0.25, device)
        val_loss = evaluate(model, valid_data, nvoc, bsz * 2, max_sql, criterion, device)
        print(f"end of epoch {epoch} | valid ppl {math.exp(val_loss):8.2f}")
