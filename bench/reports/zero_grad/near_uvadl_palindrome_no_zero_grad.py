# Source: https://github.com/VCharatsidis/DeepLearning-RNN-GraphRNN/blob/03a61aee72c927bd6030623239569c8f9a4bd3c5/part1/train.py
# Report: UvA Deep Learning course assignment 2 (palindrome RNN), training loop fixed: optimizer.zero_grad() at the top of every step
# Shape: gradients reset each step before backward; loss only read through .item(); the time-step loop inside forward is ordinary BPTT over one fixed-length sequence
# Expect: near-miss: must be silent
import argparse
import time
from datetime import datetime

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class VanillaRNN(nn.Module):
    def __init__(self, seq_length, input_dim, num_hidden, num_classes, device='cpu'):
        super().__init__()
        self.W_hx = nn.Parameter(torch.randn(input_dim, num_hidden) * 0.01)
        self.W_hh = nn.Parameter(torch.randn(num_hidden, num_hidden) * 0.01)
        self.b_h = nn.Parameter(torch.zeros(num_hidden))
        self.W_ph = nn.Parameter(torch.randn(num_hidden, num_classes) * 0.01)
        self.b_p = nn.Parameter(torch.zeros(num_classes))
        self.seq_length = seq_length
        self.num_hidden = num_hidden
        self.device = device

    def forward(self, x):
        h = torch.zeros(x.size(0), self.num_hidden, device=self.device)
        for t in range(self.seq_length):
            x_t = x[:, t].unsqueeze(1)
            h = torch.tanh(x_t @ self.W_hx + h @ self.W_hh + self.b_h)
        return h @ self.W_ph + self.b_p


class PalindromeDataset(torch.utils.data.IterableDataset):
    def __init__(self, length):
        self.length = length

    def __iter__(self):
        while True:
            left = torch.randint(0, 10, (self.length // 2,))
            mid = torch.randint(0, 10, (self.length % 2,))
            full = torch.cat([left, mid, left.flip(0)]).float()
            yield full[:-1], full[-1].long()


def train(config):
    device = torch.device(config.device)
    model = VanillaRNN(config.input_length, config.input_dim, config.num_hidden,
                       config.num_classes, device).to(device)
    dataset = PalindromeDataset(config.input_length + 1)
    data_loader = DataLoader(dataset, config.batch_size, num_workers=1)

    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=config.learning_rate)

    for step, (batch_inputs, batch_targets) in enumerate(data_loader):
        t1 = time.time()
        optimizer.zero_grad()
        batch_inputs = batch_inputs.to(device)
        batch_targets = batch_targets.to(device)

        output = model(batch_inputs)
        loss = criterion(output, batch_targets)
        accuracy = (output.argmax(dim=1) == batch_targets).float().mean().item()

        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=config.max_norm)
        optimizer.step()

        examples_per_second = config.batch_size / float(time.time() - t1)
        if step % 10 == 0:
            print("[{}] step {:04d}/{:04d} ex/s {:.2f} acc {:.2f} loss {:.3f}".format(
                datetime.now().strftime("%Y-%m-%d %H:%M"), step, config.train_steps,
                examples_per_second, accuracy, loss.item()))
        if step == config.train_steps:
            break


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--input_length', type=int, default=10)
    parser.add_argument('--input_dim', type=int, default=1)
    parser.add_argument('--num_classes', type=int, default=10)
    parser.add_argument('--num_hidden', type=int, default=128)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--learning_rate', type=float, default=0.001)
    parser.add_argument('--train_steps', type=int, default=10000)
    parser.add_argument('--max_norm', type=float, default=10.0)
    parser.add_argument('--device', type=str, default="cuda:0")
    train(parser.parse_args())
