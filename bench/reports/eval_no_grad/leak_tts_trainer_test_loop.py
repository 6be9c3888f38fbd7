# Source: https://github.com/msalhab96/MultiSpeech/blob/e7d19f9a607f67fd58ba27c8f9bf75ae5e535c00/train.py
# Report: audit of a multi-speaker TTS trainer: Trainer.test() runs the autoregressive model over the whole test loader with autograd on (no no_grad anywhere), so every test batch builds and holds the full decoder graph until the loss's .item() is taken
# Shape: a Trainer class with a _predict helper shared by train and test; test() iterates self.test_loader, calls the helper and sums criterion(...).item() without a grad-disabled context
# Expect: TML003 line 50
import os

import torch
from torch import Tensor


class Trainer:
    def __init__(self, train_loader, test_loader, model, criterion, optimizer,
                 save_dir, epochs, device):
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.save_dir = save_dir
        self.epochs = epochs
        self.device = device

    def _predict(self, text: Tensor, spk: Tensor, speech: Tensor):
        text = text.to(self.device)
        spk = spk.to(self.device)
        speech = speech.to(self.device)
        return self.model(text, spk, speech)

    def _train_step(self, speech, speech_length, mask, text, spk):
        mel_results, stop_results, alignments = self._predict(text, spk, speech)
        self.optimizer.zero_grad()
        loss = self.criterion(lengths=speech_length, mask=mask,
                              stop_pred=stop_results, mels_pred=mel_results,
                              mels_target=speech, alignments=alignments)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train(self):
        self.model.train()
        total_train_loss = 0
        for item in self.train_loader:
            total_train_loss += self._train_step(*item)
        return total_train_loss / len(self.train_loader)

    def test(self):
        self.model.eval()
        total_test_loss = 0
        for (speech, speech_length, mask, text, spk) in self.test_loader:
            mel_results, stop_results, alignments = self._predict(text, spk, speech)  # expect: TML003
            total_test_loss += self.criterion(
                lengths=speech_length, mask=mask, stop_pred=stop_results,
                mels_pred=mel_results, mels_target=speech,
                alignments=alignments).item()
        return total_test_loss / len(self.test_loader)

    def fit(self):
        for epoch in range(self.epochs):
            train_loss = self.train()
            test_loss = self.test()
            print(f"epoch={epoch}, training loss: {train_loss}, testing loss: {test_loss}")
            self.save_ckpt(epoch)

    def save_ckpt(self, idx: int):
        path = os.path.join(self.save_dir, f"ckpt_{idx}")
        torch.save(self.model.state_dict(), path)
        print(f"checkpoint saved to {path}")
