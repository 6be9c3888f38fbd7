# Source: https://github.com/12345fengce/crnn.pytorch/blob/master/trainer/trainer.py
# Report: realistic one-edit mistake on a correct CRNN/CTC trainer: the `loss = loss.item()` rebinding is dropped
# Shape: the epoch total (bound before the loop) sums the graph-attached CTC loss tensor each step: an autograd chain over every batch of the epoch
# Expect: TML001 line 59
import time

import torch
import torch.nn as nn


def greedy_decode(probs, alphabet):
    out = []
    for seq in probs.argmax(-1):
        chars, prev = [], 0
        for idx in seq.tolist():
            if idx != 0 and idx != prev:
                chars.append(alphabet[idx - 1])
            prev = idx
        out.append("".join(chars))
    return out


class CTCTrainer:
    def __init__(self, model, converter, train_loader, alphabet, writer, lr=1e-3, device="cuda"):
        self.model = model.to(device)
        self.converter = converter
        self.train_loader = train_loader
        self.alphabet = alphabet
        self.writer = writer
        self.device = device
        self.criterion = nn.CTCLoss(zero_infinity=True)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.global_step = 0

    def accuracy_batch(self, predictions, labels):
        probs = predictions.softmax(dim=2).detach().cpu()
        decoded = greedy_decode(probs, self.alphabet)
        return sum(int(p == t) for p, t in zip(decoded, labels))

    def _train_epoch(self, epoch):
        start = time.time()
        train_loss = 0.0
        n_batches = len(self.train_loader)
        for i, (images, labels) in enumerate(self.train_loader):
            self.global_step += 1
            batch_size = images.shape[0]
            targets, target_lengths = self.converter.encode(labels)
            images = images.to(self.device)
            targets = targets.to(self.device)

            preds = self.model(images)[0].log_softmax(2)
            pred_lengths = torch.full((batch_size,), preds.size(1), dtype=torch.long)
            loss = self.criterion(preds.permute(1, 0, 2), targets, pred_lengths, target_lengths)

            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

            train_loss += loss  # expect: TML001

            acc = self.accuracy_batch(preds, labels) / batch_size
            self.writer.add_scalar("TRAIN/ctc_loss", loss, self.global_step)
            self.writer.add_scalar("TRAIN/acc", acc, self.global_step)
            if (i + 1) % 100 == 0:
                print(f"[{epoch}] step {i + 1}/{n_batches} loss {loss:.4f} acc {acc:.4f}")
        return {"train_loss": train_loss / n_batches, "time": time.time() - start, "epoch": epoch}
