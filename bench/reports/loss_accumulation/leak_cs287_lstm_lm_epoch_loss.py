# Source: https://github.com/srush/cs287/blob/036c9b6a6196df2a38f5f079e1fbcc320f0c909d/hw2/hw2.py
# Report: real code: the LSTM language-model trainer sums the graph-attached batch loss into the epoch total, and validate() runs the LM after eval() without no_grad while summing the losses
# Shape: train_loss/valid_loss are bound before the loop and += the loss tensor (graph kept; in validate all activations of every batch); the LSTM state is detached inside forward, so hid is fine
# Expect: TML001 lines 40, 55; TML003 line 54
import math

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class LstmLm(nn.Module):
    def __init__(self, vsize, nhid, nlayers=1, dropout=0.0, tie=True, padidx=1):
        super().__init__()
        self.vsize = vsize
        self.padidx = padidx
        self.lut = nn.Embedding(vsize, nhid)
        self.rnn = nn.LSTM(input_size=nhid, hidden_size=nhid, num_layers=nlayers, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(nhid, vsize)
        if tie:
            self.proj.weight = self.lut.weight

    def forward(self, tokens, hid):
        hs, hid = self.rnn(self.lut(tokens), hid)
        # the carried state leaves forward already cut from the graph
        return self.proj(self.drop(hs)), tuple(h.detach() for h in hid)

    def train_epoch(self, batches, criterion, optimizer, clip=5.0):
        self.train()
        train_loss = 0
        nwords = 0
        hid = None
        for batch in batches:
            optimizer.zero_grad()
            x, y = batch.text.cuda(), batch.target.cuda()
            out, hid = self(x, hid)
            bloss = criterion(out.view(-1, self.vsize), y.view(-1))
            bloss.backward()
            train_loss += bloss  # expect: TML001
            nwords += y.ne(self.padidx).int().sum()
            if clip > 0:
                clip_grad_norm_(self.parameters(), clip)
            optimizer.step()
        return float(train_loss), int(nwords)

    def validate(self, batches, criterion):
        self.eval()
        valid_loss = 0
        nwords = 0
        hid = None
        for batch in batches:
            x, y = batch.text.cuda(), batch.target.cuda()
            out, hid = self(x, hid)  # expect: TML003
            valid_loss += criterion(out.view(-1, self.vsize), y.view(-1))  # expect: TML001
            nwords += y.ne(self.padidx).int().sum()
        return float(valid_loss), int(nwords)


def run(model, train_iter, valid_iter, epochs=10, lr=0.01):
    criterion = nn.CrossEntropyLoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        tl, tw = model.train_epoch(train_iter, criterion, optimizer)
        vl, vw = model.validate(valid_iter, criterion)
        print(f"epoch {epoch}: train ppl {math.exp(tl / tw):.2f} valid ppl {math.exp(vl / vw):.2f}")
