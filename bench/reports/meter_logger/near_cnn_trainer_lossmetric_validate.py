# Source: https://github.com/mamaheux/pytorch-exemple-calcul-canada/blob/a253cc76769ed98f5f67cc247931c64bdffb1afd/classifier_trainer.py
# Report: audit of a course classifier trainer whose meters are correct (LossMetric gets loss.item(), AccuracyMetric reduces the attached scores with .item() inside add); this near-miss keeps that and wraps _validate's loop in torch.no_grad()
# Shape: same trainer and meters on self; the attached class scores still travel into AccuracyMetric.add, but only an int (.item()) is kept, and the loss meter only ever receives Python floats
# Expect: near-miss: must be silent
import os
import torch
import torch.nn as nn
from tqdm import tqdm


class LossMetric:
    def __init__(self):
        self.clear()

    def clear(self):
        self._loss = 0
        self._count = 0

    def add(self, loss):
        self._loss += loss
        self._count += 1

    def get_loss(self):
        return self._loss / max(self._count, 1)


class AccuracyMetric:
    def __init__(self):
        self.clear()

    def clear(self):
        self._good = 0
        self._total = 0

    def add(self, class_scores, target):
        self._good += (class_scores.argmax(dim=1) == target).sum().item()
        self._total += target.size(0)

    def get_accuracy(self):
        return self._good / max(self._total, 1)


class ClassifierTrainer:
    def __init__(self, device, model, train_loader, val_loader, epochs=10, lr=0.01, out_dir="runs"):
        self._device = device
        self._model = model.to(device)
        self._train_loader, self._val_loader = train_loader, val_loader
        self._epochs = epochs
        self._out_dir = out_dir
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=lr)
        self._scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self._optimizer, epochs)
        self._criterion = nn.CrossEntropyLoss()
        self._train_loss, self._train_acc = LossMetric(), AccuracyMetric()
        self._val_loss, self._val_acc = LossMetric(), AccuracyMetric()

    def train(self):
        os.makedirs(self._out_dir, exist_ok=True)
        for epoch in range(self._epochs):
            self._train_one_epoch()
            self._validate()
            self._scheduler.step()
            print(f"[{epoch + 1}/{self._epochs}] train {self._train_loss.get_loss():.4f} "
                  f"acc {self._train_acc.get_accuracy():.3f} | val {float(self._val_loss.get_loss()):.4f} "
                  f"acc {self._val_acc.get_accuracy():.3f}")
            torch.save(self._model.state_dict(), os.path.join(self._out_dir, f"epoch_{epoch + 1}.pth"))

    def _train_one_epoch(self):
        self._train_loss.clear()
        self._train_acc.clear()
        self._model.train()
        for image, target in tqdm(self._train_loader):
            class_scores = self._model(image.to(self._device))
            target = target.to(self._device)
            loss = self._criterion(class_scores, target)
            self._optimizer.zero_grad()
            loss.backward()
            self._optimizer.step()
            self._train_loss.add(loss.item())
            self._train_acc.add(class_scores, target)

    def _validate(self):
        self._val_loss.clear()
        self._val_acc.clear()
        self._model.eval()
        with torch.no_grad():
            for image, target in tqdm(self._val_loader):
                class_scores = self._model(image.to(self._device))
                target = target.to(self._device)
                loss = self._criterion(class_scores, target)
                self._val_loss.add(loss.item())
                self._val_acc.add(class_scores, target)
