# Source: https://github.com/yikangshen/Ordered-Neurons/blob/04531c4da946742cef6ce75f125ef0be59d87ef0/main.py
# Report: ON-LSTM word-level LM training (AWD-LSTM style truncated BPTT); the repo detaches the carried hidden state with repackage_hidden at the start of every batch
# Shape: same loop as the repo: hidden = repackage_hidden(hidden) at the top of each batch cuts the carried state from the previous graph (truncated BPTT); losses summed with .item() where the repo uses .data, and evaluate runs under no_grad
# Expect: near-miss: must be silent
import math
import time

import numpy as np
import torch

from utils import batchify, get_batch, repackage_hidden

args = None
model = None
criterion = None
optimizer = None
params = None
train_data = None
corpus = None
epoch = 1


def evaluate(data_source, batch_size=10):
    model.eval()
    total_loss = 0
    hidden = model.init_hidden(batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i, args, evaluation=True)
            output, hidden = model(data, hidden)
            total_loss += len(data) * criterion(model.decoder.weight, model.decoder.bias, output, targets).item()
    return total_loss / len(data_source)


def train():
    total_loss = 0
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)
    batch, i = 0, 0
    while i < train_data.size(0) - 1 - 1:
        bptt = args.bptt if np.random.random() < 0.95 else args.bptt / 2.0
        seq_len = max(5, int(np.random.normal(bptt, 5)))
        lr2 = optimizer.param_groups[0]["lr"]
        optimizer.param_groups[0]["lr"] = lr2 * seq_len / args.bptt
        model.train()
        data, targets = get_batch(train_data, i, args, seq_len=seq_len)

        optimizer.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden, rnn_hs, dropped_rnn_hs = model(data, hidden, return_h=True)
        raw_loss = criterion(model.decoder.weight, model.decoder.bias, output, targets)

        loss = raw_loss
        if args.alpha:
            loss = loss + sum(args.alpha * h.pow(2).mean() for h in dropped_rnn_hs[-1:])
        if args.beta:
            loss = loss + sum(args.beta * (h[1:] - h[:-1]).pow(2).mean() for h in rnn_hs[-1:])
        loss.backward()

        if args.clip:
            torch.nn.utils.clip_grad_norm_(params, args.clip)
        optimizer.step()

        total_loss += raw_loss.item()
        optimizer.param_groups[0]["lr"] = lr2
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print("| epoch {:3d} | {:5d} batches | ms/batch {:5.2f} | loss {:5.2f} | ppl {:8.2f}".format(
                epoch, batch, elapsed * 1000 / args.log_interval, cur_loss, math.exp(cur_loss)))
            total_loss = 0
            start_time = time.time()
        batch += 1
        i += seq_len
