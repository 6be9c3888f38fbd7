# Source: https://github.com/OpenNMT/OpenNMT-py/issues/403
# Report: fixed OpenNMT-py decoder state from the #403 discussion: detach() rebinds hidden and input_feed to their detached copies, so each truncation chunk starts from a graph-free state
# Shape: same dec_state carried across trunc_size chunks through the model call and the same dec_state.detach() call, but detach() now assigns the detached tensors back to the state object
# Expect: near-miss: must be silent
import torch
from torch import nn


class RNNDecoderState:
    def __init__(self, hidden, input_feed):
        self.hidden = hidden
        self.input_feed = input_feed

    @property
    def _all(self):
        return self.hidden + (self.input_feed,)

    def detach(self):
        self.hidden = tuple(h.detach() for h in self.hidden)
        self.input_feed = self.input_feed.detach()


class Seq2Seq(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.LSTM(dim, dim)
        self.decoder = nn.LSTMCell(2 * dim, dim)
        self.gen = nn.Linear(dim, vocab)

    def forward(self, src, tgt, dec_state=None):
        memory, (h, c) = self.encoder(self.emb(src))
        if dec_state is None:
            dec_state = RNNDecoderState((h[-1], c[-1]), torch.zeros_like(h[-1]))
        hidden, feed, outs = dec_state.hidden, dec_state.input_feed, []
        for emb_t in self.emb(tgt):
            hidden = self.decoder(torch.cat([emb_t, feed], dim=-1), hidden)
            feed = hidden[0]
            outs.append(self.gen(feed))
        return torch.stack(outs), RNNDecoderState(hidden, feed)


def train_batch(model, optim, criterion, src, tgt_outer, trunc_size=20):
    target_size = tgt_outer.size(0)
    dec_state = None
    for j in range(0, target_size - 1, trunc_size):
        tgt = tgt_outer[j: j + trunc_size]
        gold = tgt_outer[j + 1: j + 1 + trunc_size]
        tgt = tgt[: gold.size(0)]
        model.zero_grad()
        outputs, dec_state = model(src, tgt, dec_state)
        loss = criterion(outputs.view(-1, outputs.size(-1)), gold.reshape(-1))
        loss.backward()
        optim.step()
        if dec_state is not None:
            dec_state.detach()
