# Source: https://github.com/joshuachak/char-rnn-pytorch-mps/blob/9b4755fd38aa2c6c95b0fb64a9912318c35f9935/src/training/trainer.py
# Report: PyTorch port of Karpathy's char-rnn: Trainer._train_epoch builds a fresh hidden state for every batch and logs loss.item()
# Shape: hidden = self.model.init_hidden(...) inside the batch loop, so the (h, c) returned by the model dies with the iteration; losses kept as floats
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn
import torch.optim as optim


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, hidden_size=256, num_layers=2):
        super().__init__()
        self.vocab_size = vocab_size
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def init_hidden(self, batch_size, device):
        shape = (self.num_layers, batch_size, self.hidden_size)
        return (torch.zeros(shape, device=device), torch.zeros(shape, device=device))

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embed(x), hidden)
        return torch.log_softmax(self.head(out), dim=-1), hidden


class Trainer:
    def __init__(self, model, dataloaders, config, device):
        self.device = device
        self.model = model.to(device)
        self.vocab_size = model.vocab_size
        self.dataloaders = dataloaders
        self.config = config
        self.optimizer = optim.AdamW(self.model.parameters(), lr=config.learning_rate)
        self.criterion = nn.NLLLoss()
        self.current_iteration = 0
        self.train_losses = []

    def _train_epoch(self):
        self.model.train()
        epoch_loss = 0.0
        loader = self.dataloaders['train']
        for data, target in loader:
            self.current_iteration += 1
            data = data.to(self.device, non_blocking=True)
            target = target.to(self.device, non_blocking=True)
            hidden = self.model.init_hidden(data.size(0), self.device)

            self.optimizer.zero_grad()
            output, hidden = self.model(data, hidden)
            loss = self.criterion(output.view(-1, self.vocab_size), target.view(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
            self.optimizer.step()

            epoch_loss += loss.item()
        return epoch_loss / len(loader)

    def train(self, epochs):
        for _ in range(epochs):
            train_loss = self._train_epoch()
            self.train_losses.append(train_loss)
            print(f"train loss {train_loss:.4f} ppl {math.exp(train_loss):.2f}")
