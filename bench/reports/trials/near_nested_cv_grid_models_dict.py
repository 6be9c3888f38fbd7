# Source: https://github.com/clmonter/Nested-cross-validation-and-grid-search-using-Pytorch/blob/767a803f82a5aa6263864384ad4775b53c3b2a92/grid_search.py
# Report: audit of a nested-CV grid search: GridSearch.fit keeps every grid point's model wrapper (network still on the GPU) in self.cv_models for the whole search, but each wrapper (MLP.py) only keeps Python floats on self: the epoch sum takes loss.item(), validation runs under no_grad and predictions leave as .cpu().tolist()
# Shape: same FoldMLP(nn.Module) wrapper summing loss.item() into current_loss and appending it to self.train_loss; GridSearch loops inner folds x batch size x hidden x lr and stores each wrapper in self.cv_models[str(n)] (models kept alive, no tensors with history)
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn
from sklearn.metrics import f1_score


class FoldMLP(nn.Module):
    def __init__(self, dimx, dimy, hidden, lr, num_epochs, cuda=True):
        super().__init__()
        self.dimx, self.dimy, self.hidden = dimx, dimy, hidden
        self.lr, self.num_epochs, self.use_cuda = lr, num_epochs, cuda
        self.loss_function = nn.CrossEntropyLoss()
        self.train_loss, self.valid_loss = [], []
        self.valid_acc, self.f1_val_weighted = [], []

    def _to_device(self, batch):
        if self.use_cuda:
            return batch["data"].cuda(), batch["label"].cuda()
        return batch["data"], batch["label"]

    def train_one_fold(self, trainloader, validloader):
        self.network = nn.Sequential(nn.Linear(self.dimx, self.hidden), nn.ReLU(),
                                     nn.Linear(self.hidden, self.dimy))
        if self.use_cuda:
            self.network = self.network.cuda()
        optimizer = torch.optim.SGD(self.network.parameters(), lr=self.lr, momentum=0.9, nesterov=True)
        for epoch in range(self.num_epochs):
            current_loss = 0.0
            for batch in trainloader:
                inputs, targets = self._to_device(batch)
                optimizer.zero_grad()
                outputs = self.network(inputs)
                loss = self.loss_function(outputs, targets)
                loss.backward()
                optimizer.step()
                current_loss += loss.item()
            self.train_loss.append(current_loss)
            running, correct, total, preds, reals = 0.0, 0, 0, [], []
            with torch.no_grad():
                for batch in validloader:
                    inputs, targets = self._to_device(batch)
                    outputs = self.network(inputs)
                    running += self.loss_function(outputs, targets).item()
                    predicted = outputs.argmax(dim=1)
                    correct += (predicted == targets).sum().item()
                    total += targets.size(0)
                    preds.extend(predicted.cpu().tolist())
                    reals.extend(targets.cpu().tolist())
            self.valid_loss.append(running)
            self.valid_acc.append(100.0 * correct / total)
            self.f1_val_weighted.append(f1_score(reals, preds, average="weighted"))


class GridSearch:
    def __init__(self, folds_x, folds_y, p_grid, n_inner_folds=4, cuda=True):
        self.folds_x, self.folds_y = folds_x, folds_y
        self.p_grid, self.n_inner_folds, self.cuda = p_grid, n_inner_folds, cuda
        self.cv_models, self.scores = {}, {}

    def fit(self, outer_fold, make_loader):
        n = 0
        for inner in range(1, self.n_inner_folds + 2):
            if inner == outer_fold:
                continue
            train_ids = [k for k in range(1, self.n_inner_folds + 2) if k not in (inner, outer_fold)]
            x_tr = np.concatenate([self.folds_x[k] for k in train_ids])
            y_tr = np.concatenate([self.folds_y[k] for k in train_ids])
            for batch in self.p_grid["batch_size"]:
                trainloader = make_loader(x_tr, y_tr, batch, shuffle=True)
                validloader = make_loader(self.folds_x[inner], self.folds_y[inner], batch, shuffle=False)
                for hidden in self.p_grid["hidden1"]:
                    for lr in self.p_grid["lr"]:
                        model = FoldMLP(x_tr.shape[1], 8, hidden, lr, self.p_grid["num_epochs"], self.cuda)
                        model.train_one_fold(trainloader, validloader)
                        self.cv_models[str(n)] = model
                        self.scores[str(n)] = max(model.f1_val_weighted)
                        n += 1
        best = max(self.scores, key=self.scores.get)
        self.best_model_ = self.cv_models[best]
        return self.best_model_
