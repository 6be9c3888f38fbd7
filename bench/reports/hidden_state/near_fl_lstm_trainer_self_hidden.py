# Source: https://github.com/wizard1203/GossipFL/blob/c3a3e3c70531936d14d23146f0c46a2635846e49/trainers/lstmpy_trainer.py
# Report: audit of the federated LSTM language-model trainer: correct as written, it keeps the recurrent state on self.hidden across batches but calls repackage_hidden (detach) before every forward, so each step's graph ends at the batch boundary
# Shape: same trainer class; the loop rebinds self.hidden from the model's output (a loop-carried self attribute) after detaching the previous state, and backward() needs no retain_graph
# Expect: near-miss: must be silent
import logging

import torch
import torch.nn as nn


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class WordLSTM(nn.Module):
    def __init__(self, vocab_size, emb=200, hid=200, layers=2, batch_size=20, num_steps=35):
        super().__init__()
        self.vocab_size, self.hid, self.layers = vocab_size, hid, layers
        self.batch_size, self.num_steps = batch_size, num_steps
        self.embed = nn.Embedding(vocab_size, emb)
        self.lstm = nn.LSTM(emb, hid, layers, batch_first=True)
        self.decoder = nn.Linear(hid, vocab_size)

    def init_hidden(self, device):
        zeros = torch.zeros(self.layers, self.batch_size, self.hid, device=device)
        return (zeros, zeros.clone())

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.decoder(out), hidden


class LSTMTrainer:
    def __init__(self, model, device, optimizer, clip=0.25, trainer_id=0):
        self.model = model.to(device)
        self.device = device
        self.optimizer = optimizer
        self.criterion = nn.CrossEntropyLoss().to(device)
        self.clip = clip
        self.id = trainer_id
        self.hidden = None

    def epoch_init(self):
        self.hidden = self.model.init_hidden(self.device)

    def train_one_epoch(self, train_data, epoch):
        self.model.train()
        batch_loss = []
        for batch_idx, (x, labels) in enumerate(train_data):
            x, labels = x.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            if self.hidden is not None:
                self.hidden = repackage_hidden(self.hidden)
            output, self.hidden = self.model(x, self.hidden)
            targets = labels.reshape(-1)
            loss = self.criterion(output.reshape(-1, self.model.vocab_size), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
            batch_loss.append(loss.item())
            logging.info(f"Trainer {self.id} epoch {epoch} iter {batch_idx} loss {loss.item():.4f}")
        return sum(batch_loss) / max(1, len(batch_loss))

    def get_model_params(self):
        return {k: v.cpu() for k, v in self.model.state_dict().items()}

    def set_model_params(self, state):
        self.model.load_state_dict(state)


def local_round(trainer, global_state, loader, local_epochs):
    trainer.set_model_params(global_state)
    losses = []
    for epoch in range(local_epochs):
        trainer.epoch_init()
        losses.append(trainer.train_one_epoch(loader, epoch))
    return trainer.get_model_params(), losses
