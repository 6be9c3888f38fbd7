# Source: https://github.com/AntonioGr7/grimai/blob/d6bed2426e918e9d4e660b50d8bced9300b39261/engine.py
# Report: audit of a small training engine whose Metric.update() both appends the value to self.losses and sums it into self.loss; the repository passes loss.item(), this is the variant it avoids, handing the raw loss tensor to the meter
# Shape: as the repository has it: the same storing meter, but Engine.train() and Engine.evaluate() both hand it loss.item(), so the list and the running sum only ever hold Python floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class Metric:
    def __init__(self):
        self.losses = []
        self.loss = 0
        self.count = 0

    def update(self, loss, batch_size=1):
        self.losses.append(loss)
        self.loss += loss
        self.count += batch_size

    def avg_loss(self):
        return self.loss / self.count


class Engine:
    def __init__(self, model, optimizer, scheduler=None, device="cpu"):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device

    def train(self, data_loader):
        self.model.train()
        metric = Metric()
        for data in data_loader:
            self.optimizer.zero_grad()
            inputs = data["x"].to(self.device)
            targets = data["y"].to(self.device)
            outputs = self.model(inputs)
            loss = self.model.loss_fn(targets, outputs)
            loss.backward()
            self.optimizer.step()
            if self.scheduler is not None:
                self.scheduler.step()
            metric.update(loss.item(), inputs.size(0))
        return float(metric.avg_loss())

    def evaluate(self, data_loader):
        self.model.eval()
        metric = Metric()
        for data in data_loader:
            inputs = data["x"].to(self.device)
            targets = data["y"].to(self.device)
            with torch.no_grad():
                outputs = self.model(inputs)
                loss = self.model.loss_fn(targets, outputs)
            metric.update(loss.item(), inputs.size(0))
        return metric.avg_loss()


def fit(model, optimizer, train_loader, valid_loader, epochs=10, device="cuda"):
    engine = Engine(model.to(device), optimizer, device=device)
    best = float("inf")
    for epoch in range(epochs):
        train_loss = engine.train(train_loader)
        valid_loss = engine.evaluate(valid_loader)
        print(f"epoch {epoch}: train {train_loss:.4f} valid {valid_loss:.4f}")
        if valid_loss < best:
            best = valid_loss
            torch.save(model.state_dict(), "best.pt")
    return best
