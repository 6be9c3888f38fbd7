# Source: https://github.com/pytorch/pytorch/issues/2769
# Report: video-feature LSTM classifier kept its (h, c) on self.hidden and fed it back on every forward; the per-batch time (and memory) grew steadily through the epoch.
# Shape: the usual fix: forward still carries the state on self.hidden, but stores it detached (truncated BPTT at the batch boundary), and backward no longer retains the graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMClassifier(nn.Module):
    def __init__(self, input_len=1024, hidden_len=1024, target_size=101, is_softmax=True):
        super().__init__()
        self.hidden_len = hidden_len
        self.is_softmax = is_softmax
        self.target_size = target_size
        self.lstm = nn.LSTM(input_len, hidden_len, batch_first=True)
        self.hidden2class = nn.Linear(hidden_len, target_size)
        self.hidden = self.init_hidden()

    def init_hidden(self, device="cpu"):
        return (
            torch.zeros(1, 1, self.hidden_len, device=device),
            torch.zeros(1, 1, self.hidden_len, device=device),
        )

    def forward(self, x):
        lstm_out, hidden = self.lstm(x, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
        scores = self.hidden2class(lstm_out[:, -1, :]).view(-1, self.target_size)
        if self.is_softmax:
            scores = F.log_softmax(scores, dim=1)
        return scores


def accuracy(output, target):
    return (output.argmax(dim=1) == target).float().mean().item() * 100.0


def train(train_loader, model, criterion, optimizer, epoch, logger, print_freq=1):
    model.train()
    model.hidden = model.init_hidden(device="cuda")
    losses, top1 = [], []
    for i, (feats, target) in enumerate(train_loader):
        feats = feats.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        output = model(feats)
        loss = criterion(output, target)
        losses.append(loss.item())
        top1.append(accuracy(output, target))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if i % print_freq == 0:
            logger.info(
                "Epoch: [%d][%d/%d]\tLoss %.4f (%.4f)\tPrec@1 %.3f",
                epoch, i, len(train_loader), losses[-1],
                sum(losses) / len(losses), sum(top1) / len(top1),
            )
