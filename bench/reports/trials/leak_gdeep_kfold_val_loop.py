# Source: https://github.com/giotto-ai/giotto-deep/commit/a9602789b617eb63350f06a951a74d86fb6d05f6
# Report: "fix torch.no_grad() for eval and test": the Pipeline that Gridsearch builds for every optuna trial trains one fresh model per cross-validation fold, and its validation loop ran the model after model.eval() with grad enabled, appending softmax probabilities (with their graphs) and device labels to lists kept for the PR curve (source note: gdeep/pipeline/pipeline.py, before the fix)
# Shape: per-trial Pipeline and per-fold reset_model()/optimizer kept as in the repo; the validation loop (inlined, as in earlier versions of the file) keeps graph-attached probabilities and GPU labels until the PR curve is drawn
# Expect: TML003 line 48; TML001 line 49; TML004 line 52
import copy

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, SubsetRandomSampler


class Pipeline:
    def __init__(self, model, dataloaders, loss_fn, writer, device="cuda"):
        self.DEVICE = torch.device(device)
        self.model = model.to(self.DEVICE)
        self.initial_model = copy.deepcopy(self.model)
        self.dataloaders = dataloaders
        self.loss_fn = loss_fn
        self.writer = writer
        self.val_epoch = 0

    def reset_model(self):
        self.model = copy.deepcopy(self.initial_model)

    def _train_loop(self, dl_tr):
        self.model.train()
        t_loss = 0.0
        for X, y in dl_tr:
            X, y = X.to(self.DEVICE), y.to(self.DEVICE)
            loss = self.loss_fn(self.model(X), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            t_loss += loss.item()
        return t_loss / len(dl_tr)

    def _val_loop(self, dl_val, writer_tag="validation"):
        size = len(dl_val.sampler)
        val_loss, correct = 0, 0
        class_label = []
        class_probs = []
        self.model.eval()
        for X, y in dl_val:
            X = X.to(self.DEVICE)
            y = y.to(self.DEVICE)
            pred = self.model(X)  # expect: TML003
            class_probs.append(F.softmax(pred, dim=1))  # expect: TML001
            val_loss += self.loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
            class_label.append(y)  # expect: TML004
        probs = torch.cat(class_probs).cpu()
        labels = torch.cat(class_label).cpu()
        for class_index in range(probs.shape[1]):
            self.writer.add_pr_curve(writer_tag + str(class_index), labels == class_index,
                                     probs[:, class_index], global_step=self.val_epoch)
        return val_loss / size, 100 * correct / size

    def train(self, optimizer, n_epochs=10, optimizers_param=None, k_folds=5, batch_size=32):
        optimizers_param = optimizers_param or {"lr": 0.001}
        dataset = self.dataloaders[0].dataset
        mean_val_loss, mean_val_acc = [], []
        valloss, valacc = -1.0, 0.0
        for fold, (tr_idx, val_idx) in enumerate(KFold(k_folds).split(np.arange(len(dataset)))):
            self.reset_model()
            self.optimizer = optimizer(self.model.parameters(), **optimizers_param)
            dl_tr = DataLoader(dataset, batch_size=batch_size, sampler=SubsetRandomSampler(tr_idx))
            dl_val = DataLoader(dataset, batch_size=batch_size, sampler=SubsetRandomSampler(val_idx))
            for t in range(n_epochs):
                self.val_epoch = t
                self._train_loop(dl_tr)
                valloss, valacc = self._val_loop(dl_val, "validation fold" + str(fold + 1))
            mean_val_loss.append(valloss)
            mean_val_acc.append(valacc)
        return float(np.mean(mean_val_loss)), float(np.mean(mean_val_acc))


class Gridsearch:
    def __init__(self, pipe, n_trials=10):
        self.pipe = pipe
        self.n_trials = n_trials

    def _objective(self, trial, optimizers, n_epochs, models_hyperparams):
        optimizer = {o.__name__: o for o in optimizers}[
            trial.suggest_categorical("optimizer", [o.__name__ for o in optimizers])]
        lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
        hidden = trial.suggest_int("hidden", *models_hyperparams["hidden"])
        new_model = type(self.pipe.model)(hidden=hidden)
        new_pipe = Pipeline(new_model, self.pipe.dataloaders, self.pipe.loss_fn, self.pipe.writer)
        loss, accuracy = new_pipe.train(optimizer, n_epochs, {"lr": lr})
        del new_pipe
        del new_model
        return loss

    def start(self, study, optimizers, n_epochs, models_hyperparams):
        study.optimize(lambda tr: self._objective(tr, optimizers, n_epochs, models_hyperparams),
                       n_trials=self.n_trials)
        return study.best_trial
