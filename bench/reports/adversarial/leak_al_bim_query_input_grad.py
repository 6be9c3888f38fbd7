# Source: https://github.com/ej0cl6/deep-active-learning/blob/03214e1b417a57aaff1976e07ddb9be395467a0f/query_strategies/adversarial_bim.py
# Report: AdversarialBIM active-learning query runs a BIM attack per unlabeled sample and calls loss.backward() only to read nx.grad, while the classifier's parameters still require grad (audited: every attack step fills and accumulates parameter .grad buffers that nobody reads or zeroes)
# Shape: same strategy class and cal_dis loop; the perturbation eta is updated from nx.grad.data (no graph chain), the waste is the parameter-gradient fill on each backward
# Expect: TML020 line 33
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset


class Strategy:
    def __init__(self, X, Y, idxs_lb, net, args):
        self.X, self.Y = X, Y
        self.idxs_lb = idxs_lb
        self.clf = net
        self.args = args
        self.n_pool = len(Y)


class AdversarialBIM(Strategy):
    def __init__(self, X, Y, idxs_lb, net, args, eps=0.05, max_iter=50):
        super().__init__(X, Y, idxs_lb, net, args)
        self.eps = eps
        self.max_iter = max_iter

    def cal_dis(self, x):
        nx = torch.unsqueeze(x, 0).cuda().requires_grad_()
        eta = torch.zeros(nx.shape, device=nx.device)
        out, e1 = self.clf(nx + eta)
        py = ny = out.max(1)[1]
        for _ in range(self.max_iter):
            loss = F.cross_entropy(out, ny)
            loss.backward()  # expect: TML020
            eta += self.eps * torch.sign(nx.grad.data)
            nx.grad.data.zero_()
            out, e1 = self.clf(nx + eta)
            py = out.max(1)[1]
            if py.item() != ny.item():
                break
        return (eta * eta).sum().item()

    def query(self, n, pool_dataset):
        idxs_unlabeled = np.arange(self.n_pool)[~self.idxs_lb]
        self.clf.eval()
        dis = np.zeros(idxs_unlabeled.shape)
        for i in range(len(idxs_unlabeled)):
            if i % 100 == 0:
                print("adv {}/{}".format(i, len(idxs_unlabeled)))
            x, y, idx = pool_dataset[i]
            dis[i] = self.cal_dis(x)
        return idxs_unlabeled[dis.argsort()[:n]]
