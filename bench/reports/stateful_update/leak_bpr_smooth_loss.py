# Source: https://github.com/sh0416/bpr/issues/12
# Report: the BPR training loop prints an exponentially smoothed loss built as smooth_loss*0.99 + loss*0.01 from the raw loss tensor (train.py quoted in the issue)
# Shape: smooth_loss is loop-carried and mixes in the graph-attached loss each step, so every step's loss node is chained onto the previous ones for the whole run
# Expect: TML005 line 65
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter


class TripletPairs(Dataset):
    def __init__(self, num_item, user_items, pairs):
        self.num_item = num_item
        self.user_items = user_items
        self.pairs = pairs

    def __getitem__(self, idx):
        u, i = self.pairs[idx]
        j = np.random.randint(self.num_item)
        while j in self.user_items[u]:
            j = np.random.randint(self.num_item)
        return u, i, j

    def __len__(self):
        return len(self.pairs)


class BPR(nn.Module):
    def __init__(self, n_users, n_items, dim, weight_decay):
        super().__init__()
        self.W = nn.Parameter(torch.empty(n_users, dim))
        self.H = nn.Parameter(torch.empty(n_items, dim))
        nn.init.xavier_normal_(self.W.data)
        nn.init.xavier_normal_(self.H.data)
        self.weight_decay = weight_decay

    def forward(self, u, i, j):
        u, i, j = self.W[u], self.H[i], self.H[j]
        x_uij = (u * i).sum(dim=1) - (u * j).sum(dim=1)
        log_prob = F.logsigmoid(x_uij).sum()
        reg = self.weight_decay * (u.norm(dim=1).pow(2).sum() + i.norm(dim=1).pow(2).sum() + j.norm(dim=1).pow(2).sum())
        return -log_prob + reg


def main(args, n_users, n_items, user_items, pairs):
    loader = DataLoader(TripletPairs(n_items, user_items, pairs), batch_size=args.batch_size, shuffle=True, num_workers=8)
    model = BPR(n_users, n_items, args.dim, args.weight_decay).cuda()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    writer = SummaryWriter()

    smooth_loss = 0
    idx = 0
    for _ in range(args.n_epochs):
        for u, i, j in loader:
            optimizer.zero_grad()
            loss = model(u, i, j)
            loss.backward()
            optimizer.step()
            writer.add_scalar("train/loss", loss, idx)
            smooth_loss = smooth_loss * 0.99 + loss * 0.01  # expect: TML005
            if idx % args.print_every == args.print_every - 1:
                print("loss: %.4f" % smooth_loss)
            if idx % args.save_every == args.save_every - 1:
                os.makedirs(os.path.dirname(os.path.abspath(args.model)), exist_ok=True)
                torch.save(model.state_dict(), args.model)
            idx += 1
