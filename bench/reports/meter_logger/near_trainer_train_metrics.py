# Source: https://github.com/Quantinuum/lambeq/pull/251
# Report: fixed version of the lambeq PytorchTrainer leak: training_step returns detached predictions, so stored per-batch metrics hold no graph
# Shape: training_step returns (y_hat.detach(), loss.item()); fit() stores len(x) * float(metric) per batch in the results dict
# Expect: near-miss: must be silent
from collections import defaultdict

import torch


def mean_abs_error(y_hat, y):
    return (y_hat - y).abs().mean()


class SimpleTrainer:
    def __init__(self, model, loss_function, epochs, lr=1e-3, device=-1):
        self.model = model
        self.loss_function = loss_function
        self.epochs = epochs
        self.device = torch.device("cpu" if device < 0 else f"cuda:{device}")
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.evaluate_functions = {"mae": mean_abs_error}
        self.evaluate_on_train = True
        self.train_costs = []
        self.train_epoch_costs = []
        self._train_results_epoch = defaultdict(list)
        self.model.to(self.device)

    def training_step(self, batch):
        x, y = batch
        y_hat = self.model(x.to(self.device))
        loss = self.loss_function(y_hat, y.to(self.device))
        self.train_costs.append(loss.item())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return y_hat.detach(), loss.item()

    def fit(self, train_dataset):
        for epoch in range(self.epochs):
            epoch_loss = 0.0
            self._train_results_epoch = defaultdict(list)
            for batch_idx, batch in enumerate(train_dataset):
                x, y_label = batch
                y_hat, loss = self.training_step(batch)
                if self.evaluate_on_train and self.evaluate_functions is not None:
                    for metr, func in self.evaluate_functions.items():
                        res = func(y_hat, y_label.to(self.device))
                        self._train_results_epoch[metr].append(len(x) * float(res))
                epoch_loss += len(x) * loss
                print(f"Epoch: {epoch + 1}, Batch: {batch_idx + 1}, train/loss: {loss:.4f}")
            self.train_epoch_costs.append(epoch_loss / len(train_dataset.dataset))
            for metr, vals in self._train_results_epoch.items():
                print(f"train/{metr}: {float(sum(vals)) / len(train_dataset.dataset):.4f}")
