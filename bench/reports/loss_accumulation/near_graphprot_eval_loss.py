# Source: https://github.com/DeepRank/Deeprank-GNN/blob/b93eb1932468e724411bf9b025eb1be7836d10ea/graphprot/NeuralNet.py
# Report: audited bug in GraphProt's NeuralNet.eval(): validation ran the GNN with autograd on and summed the criterion tensor over the loader; the fixed variant puts the validation loop under torch.no_grad()
# Shape: same trainer; eval() still sums the criterion tensor into loss_val and returns it to train(), but every forward and loss runs inside `with torch.no_grad():`, so the summed tensor has no graph (training keeps running_loss += loss.data.item())
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import MSELoss
from torch_geometric.loader import DataLoader


class NeuralNet:
    def __init__(self, Net, train_dataset, valid_dataset, num_features,
                 batch_size=32, task="class", classes=(0, 1), class_weights=None):
        self.train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=False)
        self.valid_loader = DataLoader(valid_dataset, batch_size=batch_size, shuffle=False)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.task = task
        if task == "class":
            self.classes_idx = {c: i for i, c in enumerate(classes)}
            self.model = Net(num_features, len(classes)).to(self.device)
            self.loss = nn.CrossEntropyLoss(weight=class_weights, reduction="mean")
        else:
            self.model = Net(num_features).to(self.device)
            self.loss = MSELoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.01)

    def Accuracy(self, prediction, target):
        overlap = (prediction.argmax(dim=1) == target).sum()
        return overlap / float(target.size()[-1])

    def format_output(self, out, acc, target):
        if self.task == "class":
            out = F.softmax(out, dim=1)
            target = torch.tensor([self.classes_idx[int(x)] for x in target], device=out.device)
            acc.append(self.Accuracy(out, target))
        else:
            out = out.reshape(-1)
            acc = None
        return out, acc, target

    def train(self, nepoch=1, validate=False):
        _train_loss, _valid_loss = [], []
        for epoch in range(1, nepoch + 1):
            self.model.train()
            acc, loss = self._epoch(epoch)
            _train_loss.append(loss)
            if validate:
                _, val_acc, val_loss = self.eval(self.valid_loader)
                _valid_loss.append(val_loss)
                print("Epoch [%04d] : valid loss %e" % (epoch, val_loss))
        return _train_loss, _valid_loss

    def eval(self, loader):
        self.model.eval()
        loss_func, loss_val = self.loss, 0
        out, acc = [], []
        with torch.no_grad():
            for data in loader:
                data = data.to(self.device)
                pred = self.model(data)
                pred, acc, data.y = self.format_output(pred, acc, data.y)
                # no graph under no_grad: summing the tensor is harmless
                loss_val += loss_func(pred, data.y)
                out += pred.reshape(-1).tolist()
        if self.task == "class":
            return out, torch.mean(torch.stack(acc)), loss_val
        return out, acc, loss_val

    def _epoch(self, epoch):
        running_loss = 0
        acc = []
        for data in self.train_loader:
            data = data.to(self.device)
            self.optimizer.zero_grad()
            out = self.model(data)
            out, acc, data.y = self.format_output(out, acc, data.y)
            loss = self.loss(out, data.y)
            running_loss += loss.data.item()
            loss.backward()
            self.optimizer.step()
        if self.task == "class":
            return torch.mean(torch.stack(acc)), running_loss
        return acc, running_loss
