# Source: https://github.com/cheng-haha/ProtoHAR/issues/2
# Report: Fixed variant of the ProtoHAR client/server train-loss evaluation: the client helper runs under torch.no_grad() and reduces each batch loss with .item() (the fix the issue asks for).
# Shape: the helper still returns its summed loss and the server still appends each client's value to a list, but the value is a Python float computed without autograd, so nothing holds a graph.
# Expect: near-miss: must be silent
import copy
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class HarNet(nn.Module):
    def __init__(self, n_feat, n_cls):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(n_feat, 128), nn.ReLU())
        self.head = nn.Linear(128, n_cls)

    def forward(self, x):
        proto = self.base(x)
        return {"proto": proto, "output": self.head(proto)}


class Client:
    def __init__(self, cid, model, train_data, device, batch_size=64):
        self.id = cid
        self.device = device
        self.model = copy.deepcopy(model)
        self.criterion = nn.CrossEntropyLoss()
        self.train_samples = len(train_data)
        self.trainloader = DataLoader(train_data, batch_size, shuffle=True)

    def set_parameters(self, model):
        for p, q in zip(self.model.parameters(), model.parameters()):
            p.data = q.data.clone()

    def train_error_and_loss(self):
        self.model.eval()
        correct = 0
        loss = 0
        with torch.no_grad():
            for x, y in self.trainloader:
                x, y = x.to(self.device), y.to(self.device)
                output = self.model(x)["output"]
                correct += (output.argmax(1) == y).sum().item()
                loss += self.criterion(output, y).item()
        return correct, loss, self.train_samples


class Server:
    def __init__(self, clients):
        self.clients = clients
        self.rs_train_acc, self.rs_train_loss = [], []

    def train_error_and_loss(self):
        num_samples, tot_correct, losses = [], [], []
        for c in self.clients:
            ct, cl, ns = c.train_error_and_loss()
            tot_correct.append(ct * 1.0)
            num_samples.append(ns)
            losses.append(cl * 1.0)
        return num_samples, tot_correct, losses

    def evaluate(self):
        ns, correct, losses = self.train_error_and_loss()
        train_acc = np.sum(correct) / np.sum(ns)
        train_loss = sum(n * l for n, l in zip(ns, losses)) / np.sum(ns)
        self.rs_train_acc.append(train_acc)
        self.rs_train_loss.append(train_loss)
        print(f"train acc {train_acc:.4f} | train loss {train_loss:.4f}")
