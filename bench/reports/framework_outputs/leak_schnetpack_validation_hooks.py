# Source: https://github.com/atomistic-machine-learning/schnetpack/pull/254
# Report: schnetpack's Trainer ran validation with autograd on and handed the graph-carrying results to every hook; the PR detached the validation results to save memory
# Shape: custom Trainer.train(): the validation forward over validation_loader builds a graph (no no_grad) and the result is passed to each hook per step
# Expect: TML003 line 47
import torch


class MeanAbsoluteError:
    def __init__(self, target):
        self.target = target
        self.l1 = 0.0
        self.n = 0

    def add_batch(self, batch, result):
        diff = (batch[self.target] - result[self.target]).detach().cpu()
        self.l1 += torch.sum(torch.abs(diff)).item()
        self.n += diff.numel()


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, validation_loader, hooks=()):
        self._model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.hooks = list(hooks)
        self.best_loss = float("inf")

    def train(self, device, n_epochs):
        for epoch in range(n_epochs):
            for train_batch in self.train_loader:
                self.optimizer.zero_grad()
                train_batch = {k: v.to(device) for k, v in train_batch.items()}
                result = self._model(train_batch)
                loss = self.loss_fn(train_batch, result)
                loss.backward()
                self.optimizer.step()
                for h in self.hooks:
                    h.on_batch_end(self, train_batch, result, loss)

            val_loss, n_val = 0.0, 0
            for val_batch in self.validation_loader:
                vsize = list(val_batch.values())[0].size(0)
                n_val += vsize
                val_batch = {k: v.to(device) for k, v in val_batch.items()}
                val_result = self._model(val_batch)  # expect: TML003
                val_batch_loss = self.loss_fn(val_batch, val_result).data.cpu().numpy()
                val_loss += val_batch_loss * vsize
                for h in self.hooks:
                    h.on_validation_batch_end(self, val_batch, val_result)
            val_loss /= n_val
            if val_loss < self.best_loss:
                self.best_loss = val_loss
            for h in self.hooks:
                h.on_validation_end(self, val_loss)
