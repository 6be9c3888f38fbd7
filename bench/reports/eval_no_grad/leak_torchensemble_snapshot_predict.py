# Source: https://github.com/TorchEnsemble-Community/Ensemble-Pytorch/blob/01f7f43ef127560e3f9b9653369eae2e0b6201e6/torchensemble/snapshot_ensemble.py
# Report: SnapshotEnsembleClassifier.predict puts the ensemble in eval mode and runs every snapshot over the test loader with autograd on (later releases decorate predict/evaluate with @torch.no_grad())
# Shape: predict() calls self.eval() then self.forward(data), which averages all snapshot estimators; with no grad-disabled context each batch saves the activations of every snapshot for a backward that never comes
# Expect: TML003 line 77
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class SnapshotEnsembleClassifier(nn.Module):
    def __init__(self, estimator, n_estimators, n_outputs, cuda=True):
        super().__init__()
        self.base_estimator_ = estimator
        self.n_estimators = n_estimators
        self.n_outputs = n_outputs
        self.device = torch.device("cuda" if cuda else "cpu")
        self.estimators_ = nn.ModuleList()

    def _forward(self, X):
        batch_size = X.size()[0]
        output = torch.zeros(batch_size, self.n_outputs).to(self.device)
        for estimator in self.estimators_:
            output += estimator(X) / len(self.estimators_)
        return output

    def forward(self, X):
        return F.softmax(self._forward(X), dim=1)

    def fit(self, train_loader, optimizer_fn, scheduler_fn, epochs=100, test_loader=None):
        estimator_ = self.base_estimator_().to(self.device)
        optimizer = optimizer_fn(estimator_.parameters())
        scheduler = scheduler_fn(optimizer)
        criterion = nn.CrossEntropyLoss()
        epoch_per_estimator = epochs // self.n_estimators
        best_acc = 0.0

        estimator_.train()
        for epoch in range(epochs):
            for batch_idx, (data, target) in enumerate(train_loader):
                data, target = data.to(self.device), target.to(self.device)
                output = estimator_(data)
                loss = criterion(output, target)

                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                scheduler.step()

                if batch_idx % 100 == 0:
                    with torch.no_grad():
                        print("Epoch: {:03d} | Batch: {:03d} | Loss: {:.5f}".format(epoch, batch_idx, loss))

            if (epoch + 1) % epoch_per_estimator == 0:
                self.estimators_.append(copy.deepcopy(estimator_))

                if test_loader is not None:
                    with torch.no_grad():
                        correct = 0.0
                        for data, target in test_loader:
                            data, target = data.to(self.device), target.to(self.device)
                            output = self.forward(data)
                            pred = output.data.max(1)[1]
                            correct += pred.eq(target.view(-1).data).sum()
                        acc = 100.0 * float(correct) / len(test_loader.dataset)
                    best_acc = max(best_acc, acc)
                    print("n_estimator: {} | Validation Acc: {:.3f} %".format(len(self.estimators_), acc))
        return best_acc

    def predict(self, test_loader):
        self.eval()
        correct = 0

        for batch_idx, (data, target) in enumerate(test_loader):
            data, target = data.to(self.device), target.to(self.device)
            output = self.forward(data)  # expect: TML003
            pred = output.data.max(1)[1]
            correct += pred.eq(target.view(-1).data).sum()

        accuracy = 100.0 * float(correct) / len(test_loader.dataset)
        return accuracy
