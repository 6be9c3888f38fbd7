# Source: https://github.com/shaoxiongji/federated-learning/blob/40a9060629d8697ea302b1f075f81addcea1cbac/models/test.py
# Report: FedAvg reference implementation: test_img() puts the global model in eval mode and runs the whole test loader through it with autograd still on (no no_grad anywhere on the call path).
# Shape: net_g(data) under net_g.eval() in an evaluation function over a test loader, no backward and no grad-disabled context: every batch saves activations for a backward that never comes (peak); losses are reduced with .item() and clients' state_dicts are collected in per-round lists, so nothing grows.
# Expect: TML003 line 66
import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class DatasetSplit(Dataset):
    def __init__(self, dataset, idxs):
        self.dataset = dataset
        self.idxs = list(idxs)

    def __len__(self):
        return len(self.idxs)

    def __getitem__(self, item):
        return self.dataset[self.idxs[item]]


class LocalUpdate:
    def __init__(self, args, dataset=None, idxs=None):
        self.args = args
        self.loss_func = nn.CrossEntropyLoss()
        self.ldr_train = DataLoader(DatasetSplit(dataset, idxs), batch_size=args.local_bs, shuffle=True)

    def train(self, net):
        net.train()
        optimizer = torch.optim.SGD(net.parameters(), lr=self.args.lr, momentum=self.args.momentum)
        epoch_loss = []
        for _ in range(self.args.local_ep):
            batch_loss = []
            for images, labels in self.ldr_train:
                images, labels = images.to(self.args.device), labels.to(self.args.device)
                net.zero_grad()
                log_probs = net(images)
                loss = self.loss_func(log_probs, labels)
                loss.backward()
                optimizer.step()
                batch_loss.append(loss.item())
            epoch_loss.append(sum(batch_loss) / len(batch_loss))
        return net.state_dict(), sum(epoch_loss) / len(epoch_loss)


def fed_avg(w_locals):
    w_avg = copy.deepcopy(w_locals[0])
    for k in w_avg.keys():
        for i in range(1, len(w_locals)):
            w_avg[k] += w_locals[i][k]
        w_avg[k] = torch.div(w_avg[k], len(w_locals))
    return w_avg


def test_img(net_g, datatest, args):
    net_g.eval()
    test_loss = 0
    correct = 0
    data_loader = DataLoader(datatest, batch_size=args.bs)
    for data, target in data_loader:
        data, target = data.to(args.device), target.to(args.device)
        log_probs = net_g(data)  # expect: TML003
        test_loss += F.cross_entropy(log_probs, target, reduction="sum").item()
        y_pred = log_probs.data.max(1, keepdim=True)[1]
        correct += y_pred.eq(target.data.view_as(y_pred)).long().cpu().sum()
    test_loss /= len(data_loader.dataset)
    accuracy = 100.0 * correct / len(data_loader.dataset)
    return accuracy, test_loss


def run_fedavg(args, net_glob, dataset_train, dataset_test, dict_users):
    net_glob.train()
    loss_train = []
    for rnd in range(args.epochs):
        w_locals, loss_locals = [], []
        m = max(int(args.frac * args.num_users), 1)
        for idx in np.random.choice(range(args.num_users), m, replace=False):
            local = LocalUpdate(args=args, dataset=dataset_train, idxs=dict_users[idx])
            w, loss = local.train(net=copy.deepcopy(net_glob).to(args.device))
            w_locals.append(copy.deepcopy(w))
            loss_locals.append(copy.deepcopy(loss))
        net_glob.load_state_dict(fed_avg(w_locals))
        loss_avg = sum(loss_locals) / len(loss_locals)
        print(f"Round {rnd:3d}, Average loss {loss_avg:.3f}")
        loss_train.append(loss_avg)

    acc_train, _ = test_img(net_glob, dataset_train, args)
    acc_test, _ = test_img(net_glob, dataset_test, args)
    print(f"Training accuracy: {acc_train:.2f}  Testing accuracy: {acc_test:.2f}")
    return loss_train
