# Source: https://github.com/ej0cl6/deep-active-learning/blob/9c1443cb73f93b8f8b7640292b2958441260fad1/nets.py
# Report: active-learning Net.predict_prob_dropout (MC-dropout scoring of the whole unlabeled pool for BALD / entropy queries) keeps the model in train() mode for dropout and relies on torch.no_grad() to keep the pool pass graph-free; audited correct idiom
# Shape: faithful shape: model stays in train() (dropout on) but the pool loop runs under torch.no_grad(), so the .cpu() softmax index-added into the outliving probs tensor carries no graph
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader
from tqdm import tqdm


class Net:
    def __init__(self, net, params, device):
        self.net = net
        self.params = params
        self.device = device

    def train(self, data):
        self.clf = self.net().to(self.device)
        self.clf.train()
        optimizer = optim.SGD(self.clf.parameters(), **self.params["optimizer_args"])
        loader = DataLoader(data, shuffle=True, **self.params["train_args"])
        for epoch in tqdm(range(1, self.params["n_epoch"] + 1), ncols=100):
            for batch_idx, (x, y, idxs) in enumerate(loader):
                x, y = x.to(self.device), y.to(self.device)
                optimizer.zero_grad()
                out, e1 = self.clf(x)
                loss = F.cross_entropy(out, y)
                loss.backward()
                optimizer.step()

    def predict_prob_dropout(self, data, n_drop=10):
        self.clf.train()
        probs = torch.zeros([len(data), len(np.unique(data.Y))])
        loader = DataLoader(data, shuffle=False, **self.params["test_args"])
        for i in range(n_drop):
            with torch.no_grad():
                for x, y, idxs in loader:
                    x, y = x.to(self.device), y.to(self.device)
                    out, e1 = self.clf(x)
                    prob = F.softmax(out, dim=1)
                    probs[idxs] += prob.cpu()
        probs /= n_drop
        return probs


class BALDDropout:
    def __init__(self, dataset, net, n_drop=10):
        self.dataset = dataset
        self.net = net
        self.n_drop = n_drop

    def query(self, n):
        unlabeled_idxs, unlabeled_data = self.dataset.get_unlabeled_data()
        probs = self.net.predict_prob_dropout(unlabeled_data, n_drop=self.n_drop)
        entropy = (-probs * torch.log(probs + 1e-12)).sum(1)
        return unlabeled_idxs[entropy.sort(descending=True)[1][:n]]

    def train(self):
        labeled_idxs, labeled_data = self.dataset.get_labeled_data()
        self.net.train(labeled_data)
