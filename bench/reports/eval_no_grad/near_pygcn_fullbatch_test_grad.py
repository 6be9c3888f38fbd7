# Source: https://github.com/tkipf/pygcn/blob/master/pygcn/train.py
# Report: full-batch GCN on Cora, fixed: the per-epoch validation pass runs under torch.no_grad() and test() is decorated with @torch.no_grad()
# Shape: the training forward is backwarded; both evaluation forwards sit in a grad-disabled context, and the losses/accuracies are only read with .item()
# Expect: near-miss: must be silent
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class GraphConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_dim, out_dim))
        self.bias = nn.Parameter(torch.empty(out_dim))
        bound = 1.0 / math.sqrt(out_dim)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x, adj):
        return torch.spmm(adj, x @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, n_feat, n_hid, n_class, dropout):
        super().__init__()
        self.gc1 = GraphConv(n_feat, n_hid)
        self.gc2 = GraphConv(n_hid, n_class)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    return preds.eq(labels).double().sum() / len(labels)


class Runner:
    def __init__(self, graph, args):
        self.adj, self.features, self.labels = graph.adj, graph.features, graph.labels
        self.idx_train, self.idx_val, self.idx_test = graph.idx_train, graph.idx_val, graph.idx_test
        self.args = args
        self.model = GCN(self.features.shape[1], args.hidden,
                         int(self.labels.max()) + 1, args.dropout).cuda()
        self.optimizer = optim.Adam(self.model.parameters(), lr=args.lr,
                                    weight_decay=args.weight_decay)

    def train(self, epoch):
        t = time.time()
        self.model.train()
        self.optimizer.zero_grad()
        output = self.model(self.features, self.adj)
        loss_train = F.nll_loss(output[self.idx_train], self.labels[self.idx_train])
        acc_train = accuracy(output[self.idx_train], self.labels[self.idx_train])
        loss_train.backward()
        self.optimizer.step()

        if not self.args.fastmode:
            # separate pass without dropout for the validation numbers
            self.model.eval()
            with torch.no_grad():
                output = self.model(self.features, self.adj)
        loss_val = F.nll_loss(output[self.idx_val], self.labels[self.idx_val])
        acc_val = accuracy(output[self.idx_val], self.labels[self.idx_val])
        print(f"epoch {epoch + 1:04d} loss_train {loss_train.item():.4f} "
              f"acc_train {acc_train.item():.4f} loss_val {loss_val.item():.4f} "
              f"acc_val {acc_val.item():.4f} time {time.time() - t:.4f}s")
        return loss_val.item()

    @torch.no_grad()
    def test(self):
        self.model.eval()
        output = self.model(self.features, self.adj)
        loss_test = F.nll_loss(output[self.idx_test], self.labels[self.idx_test])
        acc_test = accuracy(output[self.idx_test], self.labels[self.idx_test])
        print(f"test loss {loss_test.item():.4f} accuracy {acc_test.item():.4f}")
        return acc_test.item()


def main(graph, args):
    runner = Runner(graph, args)
    for epoch in range(args.epochs):
        runner.train(epoch)
    return runner.test()
