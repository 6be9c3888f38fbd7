# Source: https://github.com/Smerity/sha-rnn/issues/16
# Report: Issue about the SHA-RNN training loop, which carries both the LSTM hidden state and the attention memory (mems) across batches and repackages both after each optimizer step.
# Shape: hidden and mems are loop-carried but detached by repackage_hidden whenever the accumulated losses are back-propagated; losses is reset to [] right after, and total_loss keeps a detached value.
# Expect: near-miss: must be silent
import functools

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def repackage_hidden(h):
    if h is None:
        return None
    if isinstance(h, torch.Tensor):
        return h.detach()
    return [repackage_hidden(v) for v in h]


class SHARNN(nn.Module):
    def __init__(self, ntoken, ninp=512, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnns = nn.ModuleList([nn.LSTM(ninp, ninp) for _ in range(nlayers)])
        self.attn = nn.MultiheadAttention(ninp, 1)
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, x, hidden=None, mems=None, max_mem=1024):
        h = self.encoder(x)
        new_hidden, new_mems = [], []
        for idx, rnn in enumerate(self.rnns):
            h, hid = rnn(h, None if hidden is None else hidden[idx])
            mem = h if mems is None else torch.cat([mems[idx], h], dim=0)[-max_mem:]
            h = h + self.attn(h, mem, mem, need_weights=False)[0]
            new_hidden.append(hid)
            new_mems.append(mem)
        return self.decoder(h), new_hidden, new_mems


def train_epoch(model, optimizer, scaler, train_data, bptt=70, accumulate=1, clip=0.25):
    model.train()
    hidden, mems = None, None
    losses = []
    total_loss = 0.0
    batch, i = 0, 0
    while i < train_data.size(0) - 2:
        seq_len = min(max(5, int(np.random.normal(bptt, 5))), bptt)
        data = train_data[i:i + seq_len]
        targets = train_data[i + 1:i + 1 + seq_len].reshape(-1)

        output, hidden, mems = model(data, hidden, mems=mems)
        raw_loss = F.cross_entropy(output.view(-1, output.size(-1)), targets)
        losses.append(raw_loss)

        if batch % accumulate == 0:
            loss = functools.reduce(lambda x, y: x + y, losses)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            scaler.step(optimizer)
            scaler.update()
            if hidden is not None:
                if np.random.random() > 0.975:
                    hidden = None
                hidden = repackage_hidden(hidden)
            if mems is not None:
                if np.random.random() > 0.975:
                    mems = None
                mems = repackage_hidden(mems)
            optimizer.zero_grad()
            losses = []

        total_loss += raw_loss.detach()
        batch += 1
        i += seq_len
    return total_loss.item() / max(batch, 1)


if __name__ == "__main__":
    dev = torch.device("cuda")
    corpus = torch.randint(0, 256, (200000, 16), device=dev)
    model = SHARNN(256).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(1, 33):
        train_epoch(model, opt, scaler, corpus)
