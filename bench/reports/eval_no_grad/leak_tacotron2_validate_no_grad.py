# Source: https://github.com/NVIDIA/tacotron2/blob/0274619e45252180aec5b6ca9c18c9761d1a2765/train.py
# Report: Tacotron 2 trainer runs validate() every iters_per_checkpoint steps; the repository wraps the whole validation pass in torch.no_grad(). This variant keeps model.eval() but drops the no_grad block.
# Shape: validate() iterates a val DataLoader after model.eval() and calls model(x) with grad enabled, so every batch saves the mel/postnet/gate activations for a backward that never comes; the last y_pred (with its graph) is also handed to the logger.
# Expect: TML003 line 59
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class TinyTacotron(nn.Module):
    def __init__(self, n_symbols=148, emb=256, n_mels=80):
        super().__init__()
        self.embedding = nn.Embedding(n_symbols, emb)
        self.encoder = nn.LSTM(emb, emb // 2, batch_first=True, bidirectional=True)
        self.mel_proj = nn.Linear(emb, n_mels)
        self.postnet = nn.Sequential(nn.Conv1d(n_mels, 512, 5, padding=2), nn.Tanh(), nn.Conv1d(512, n_mels, 5, padding=2))
        self.gate = nn.Linear(emb, 1)

    def parse_batch(self, batch):
        text, mel, gate = batch
        return text.cuda(non_blocking=True), (mel.cuda(non_blocking=True), gate.cuda(non_blocking=True))

    def forward(self, text):
        enc, _ = self.encoder(self.embedding(text))
        mel = self.mel_proj(enc)
        mel_post = mel + self.postnet(mel.transpose(1, 2)).transpose(1, 2)
        return mel, mel_post, self.gate(enc).squeeze(-1)


class Tacotron2Loss(nn.Module):
    def forward(self, y_pred, y):
        mel_target, gate_target = y
        mel, mel_post, gate = y_pred
        mse = nn.functional.mse_loss(mel, mel_target) + nn.functional.mse_loss(mel_post, mel_target)
        return mse + nn.functional.binary_cross_entropy_with_logits(gate, gate_target)


class Logger:
    def __init__(self):
        self.history = []

    def log_training(self, loss, grad_norm, lr, duration, iteration):
        self.history.append((iteration, loss, float(grad_norm), lr, duration))

    def log_validation(self, loss, model, y, y_pred, iteration):
        _, mel_post, _ = y_pred
        sample = mel_post[0].data.cpu().numpy()
        print(f"val {iteration}: {loss:.5f} (mel frame range {sample.min():.2f}..{sample.max():.2f})")


def validate(model, criterion, valset, iteration, batch_size, logger):
    model.eval()
    val_loader = DataLoader(valset, num_workers=1, shuffle=False, batch_size=batch_size)
    val_loss = 0.0
    for i, batch in enumerate(val_loader):
        x, y = model.parse_batch(batch)
        y_pred = model(x)  # expect: TML003
        loss = criterion(y_pred, y)
        reduced_val_loss = loss.item()
        val_loss += reduced_val_loss
    val_loss = val_loss / (i + 1)
    model.train()
    logger.log_validation(val_loss, model, y, y_pred, iteration)


def train(model, train_loader, valset, epochs, iters_per_checkpoint=1000, lr=1e-3, batch_size=64):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-6)
    criterion, logger = Tacotron2Loss(), Logger()
    iteration = 0
    model.train()
    for epoch in range(epochs):
        for batch in train_loader:
            start = time.perf_counter()
            model.zero_grad()
            x, y = model.parse_batch(batch)
            loss = criterion(model(x), y)
            reduced_loss = loss.item()
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            logger.log_training(reduced_loss, grad_norm, lr, time.perf_counter() - start, iteration)
            if iteration % iters_per_checkpoint == 0:
                validate(model, criterion, valset, iteration, batch_size, logger)
            iteration += 1
    return logger
