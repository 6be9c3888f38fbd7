# Source: https://github.com/dreamquark-ai/tabnet/blob/2c0c4ebd2bb1cb639ea94ab4b11823bc49265588/pytorch_tabnet/abstract_model.py
# Report: pytorch-tabnet eval/predict path with the missing grad-disabled context added: _predict_batch and predict decorated with @torch.no_grad()
# Shape: the forwards in _predict_batch and predict run under the decorator, scores become numpy before being appended; training keeps p.grad = None + backward + step
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.nn.utils import clip_grad_norm_
from torch.utils.data import DataLoader


class TabModel:
    def __init__(self, network, optimizer, compute_loss, metric_container_dict, callback_container, history,
                 predict_func, device="cuda", lambda_sparse=1e-3, clip_value=None, batch_size=1024):
        self.network, self._optimizer, self.compute_loss = network, optimizer, compute_loss
        self._metric_container_dict = metric_container_dict
        self._callback_container, self.history = callback_container, history
        self.predict_func, self.device = predict_func, device
        self.lambda_sparse, self.clip_value, self.batch_size = lambda_sparse, clip_value, batch_size

    def fit_epochs(self, train_dataloader, eval_names, valid_dataloaders, max_epochs):
        for epoch_idx in range(max_epochs):
            self._callback_container.on_epoch_begin(epoch_idx)
            self._train_epoch(train_dataloader)
            for eval_name, valid_dataloader in zip(eval_names, valid_dataloaders):
                self._predict_epoch(eval_name, valid_dataloader)
            self._callback_container.on_epoch_end(epoch_idx, logs=self.history.epoch_metrics)

    def _train_epoch(self, train_loader):
        self.network.train()
        for batch_idx, (X, y) in enumerate(train_loader):
            self._callback_container.on_batch_begin(batch_idx)
            batch_logs = self._train_batch(X, y)
            self._callback_container.on_batch_end(batch_idx, batch_logs)
        self.history.epoch_metrics.update({"lr": self._optimizer.param_groups[-1]["lr"]})

    def _train_batch(self, X, y):
        batch_logs = {"batch_size": X.shape[0]}
        X = X.to(self.device).float()
        y = y.to(self.device).float()
        for param in self.network.parameters():
            param.grad = None
        output, M_loss = self.network(X)
        loss = self.compute_loss(output, y)
        loss = loss - self.lambda_sparse * M_loss
        loss.backward()
        if self.clip_value:
            clip_grad_norm_(self.network.parameters(), self.clip_value)
        self._optimizer.step()
        batch_logs["loss"] = loss.cpu().detach().numpy().item()
        return batch_logs

    def _predict_epoch(self, name, loader):
        self.network.eval()
        list_y_true = []
        list_y_score = []
        for batch_idx, (X, y) in enumerate(loader):
            scores = self._predict_batch(X)
            list_y_true.append(y)
            list_y_score.append(scores)
        y_true, scores = np.hstack(list_y_true), np.vstack(list_y_score)
        metrics_logs = self._metric_container_dict[name](y_true, scores)
        self.network.train()
        self.history.epoch_metrics.update(metrics_logs)

    @torch.no_grad()
    def _predict_batch(self, X):
        X = X.to(self.device).float()
        scores, _ = self.network(X)
        if isinstance(scores, list):
            scores = [x.cpu().detach().numpy() for x in scores]
        else:
            scores = scores.cpu().detach().numpy()
        return scores

    @torch.no_grad()
    def predict(self, X):
        self.network.eval()
        dataloader = DataLoader(torch.as_tensor(X), batch_size=self.batch_size, shuffle=False)
        results = []
        for batch_nb, data in enumerate(dataloader):
            data = data.to(self.device).float()
            output, M_loss = self.network(data)
            predictions = output.cpu().detach().numpy()
            results.append(predictions)
        res = np.vstack(results)
        return self.predict_func(res)
