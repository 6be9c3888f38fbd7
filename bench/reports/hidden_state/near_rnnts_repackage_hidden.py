# Source: https://github.com/chickenbestlover/RNN-Time-series-Anomaly-Detection/issues/42
# Report: Issue asks what repackage_hidden does in 1_train_predictor.py; the maintainer answers that it cuts the gradient (detaches the carried state from the previous batch).
# Shape: the LSTM state is carried from batch to batch but re-wrapped by repackage_hidden (detach) at the top of every batch; the inner free-running loop rebinds hidden_ from that detached copy, so each graph is bounded by one bptt window.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch import optim


class RNNPredictor(nn.Module):
    def __init__(self, feat_dim, emsize=32, nhid=32, nlayers=2):
        super().__init__()
        self.nlayers, self.nhid = nlayers, nhid
        self.encoder = nn.Linear(feat_dim, emsize)
        self.rnn = nn.LSTM(emsize, nhid, nlayers)
        self.decoder = nn.Linear(nhid, feat_dim)

    def forward(self, x, hidden, return_hiddens=False):
        out, hidden = self.rnn(self.encoder(x), hidden)
        pred = self.decoder(out) + x
        if return_hiddens:
            return pred, hidden, out
        return pred, hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))

    def repackage_hidden(self, h):
        if isinstance(h, tuple):
            return tuple(self.repackage_hidden(v) for v in h)
        return h.detach()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len]


def train(model, optimizer, criterion, train_dataset, batch_size, bptt=50, clip=10.0):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_dataset.size(0) - 1, bptt)):
        inputSeq, targetSeq = get_batch(train_dataset, i, bptt)
        # start each batch from a state cut off from the previous batch's graph
        hidden = model.repackage_hidden(hidden)
        hidden_ = model.repackage_hidden(hidden)
        optimizer.zero_grad()

        # loss 1: free-running prediction inside this window
        outVal = inputSeq[0].unsqueeze(0)
        outVals, hids1 = [], []
        for t in range(inputSeq.size(0)):
            outVal, hidden_, hid = model(outVal, hidden_, return_hiddens=True)
            outVals.append(outVal)
            hids1.append(hid)
        loss1 = criterion(torch.cat(outVals, dim=0).view(batch_size, -1), targetSeq.view(batch_size, -1))

        # loss 2: teacher forcing; hidden is carried on to the next batch
        outSeq2, hidden, hids2 = model(inputSeq, hidden, return_hiddens=True)
        loss2 = criterion(outSeq2.view(batch_size, -1), targetSeq.view(batch_size, -1))

        # loss 3: simplified professor forcing
        loss3 = criterion(torch.cat(hids1, dim=0).view(batch_size, -1), hids2.view(batch_size, -1).detach())

        loss = loss1 + loss2 + loss3
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total_loss += loss.item()
    return total_loss


if __name__ == "__main__":
    device = torch.device("cuda")
    data = torch.randn(5000, 64, 2, device=device)
    model = RNNPredictor(feat_dim=2).to(device)
    opt = optim.Adam(model.parameters(), lr=2e-4, weight_decay=1e-4)
    for epoch in range(1, 401):
        train(model, opt, nn.MSELoss(), data, batch_size=64)
