# Source: https://github.com/mamaheux/pytorch-exemple-calcul-canada/blob/a253cc76769ed98f5f67cc247931c64bdffb1afd/classifier_trainer.py
# Report: audit of a course classifier trainer: _validate() calls the model after model.eval() with no torch.no_grad(), and the trainer hands each batch loss to LossMetric objects kept on self; the repo passes loss.item(), this variant passes the live loss
# Shape: ClassifierTrainer keeps LossMetric meters on self; _validate hands the graph-attached val loss to meter.add, whose body does self._loss += loss, so every val batch's whole graph stays alive until the next clear()
# Expect: TML001 line 89; TML003 line 86
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
        for image, target in tqdm(self._val_loader):
            class_scores = self._model(image.to(self._device))  # expect: TML003
            target = target.to(self._device)
            loss = self._criterion(class_scores, target)
            self._val_loss.add(loss)  # expect: TML001
            self._val_acc.add(class_scores, target)
