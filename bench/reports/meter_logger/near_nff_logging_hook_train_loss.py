# Source: https://github.com/learningmatter-mit/NeuralForceField/blob/09fd924612f5da94ab5f04b30974bf75206116e6/nff/train/hooks/logging.py
# Report: audited idiom in NFF's (SchNetPack-derived) LoggingHook.on_batch_end: the trainer hands the live loss to every hook and the hook sums `float(loss.data) * n_samples` into self._train_loss; NFF issue #5 reports per-epoch time creeping up while training PaiNN
# Shape: as in the repository: the hook converts the live loss with float(loss.data) before adding it to the epoch sum, so nothing of the graph outlives the step
# Expect: near-miss: must be silent
import torch


class Hook:
    def on_epoch_begin(self, trainer):
        pass

    def on_batch_end(self, trainer, train_batch, result, loss):
        pass


class LoggingHook(Hook):
    def __init__(self, log_path, metrics, log_train_loss=True, mini_batches=1):
        self.log_path = log_path
        self.metrics = metrics
        self.log_train_loss = log_train_loss
        self.mini_batches = mini_batches
        self._train_loss = 0
        self._counter = 0

    def on_epoch_begin(self, trainer):
        if self.log_train_loss:
            self._train_loss = 0.0
            self._counter = 0
        else:
            self._train_loss = None

    def on_batch_end(self, trainer, train_batch, result, loss):
        if self.log_train_loss:
            n_samples = self._batch_size(result)
            self._train_loss += float(loss.data) * n_samples / self.mini_batches
            self._counter += n_samples

    def _batch_size(self, result):
        if isinstance(result, dict):
            return list(result.values())[0].size(0)
        if isinstance(result, (list, tuple)):
            return result[0].size(0)
        return result.size(0)

    def epoch_train_loss(self):
        return self._train_loss / max(self._counter, 1)


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, hooks, device="cuda"):
        self._model = model.to(device)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.hooks = hooks
        self.device = device

    def train_epoch(self):
        self._model.train()
        for h in self.hooks:
            h.on_epoch_begin(self)
        for batch in self.train_loader:
            batch = {k: v.to(self.device) for k, v in batch.items()}
            self.optimizer.zero_grad()
            results = self._model(batch)
            loss = self.loss_fn(batch, results)
            loss.backward()
            self.optimizer.step()
            for h in self.hooks:
                h.on_batch_end(self, batch, results, loss)
