# Source: https://github.com/CRIPAC-DIG/GRACE/blob/master/train.py
# Report: GRACE's final evaluation embeds the full graph after model.eval() without disabling autograd, then hands the embeddings to a scikit-learn probe
# Shape: test() is an evaluation function (model.eval(), no backward) whose full-graph forward records activations for every GCN layer; the probe only reads z.detach().cpu().numpy()
# Expect: TML003 line 54
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split


def drop_feature(x, drop_prob):
    mask = torch.empty((x.size(1),), dtype=torch.float32, device=x.device).uniform_(0, 1) < drop_prob
    x = x.clone()
    x[:, mask] = 0
    return x


def dropout_edges(edge_index, p):
    keep = torch.rand(edge_index.size(1), device=edge_index.device) >= p
    return edge_index[:, keep]


def label_classification(embeddings, y, ratio):
    X = embeddings.detach().cpu().numpy()
    Y = y.detach().cpu().numpy()
    X = X / (((X ** 2).sum(axis=1, keepdims=True)) ** 0.5 + 1e-12)
    X_tr, X_te, y_tr, y_te = train_test_split(X, Y, test_size=1 - ratio)
    clf = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
    acc = clf.score(X_te, y_te)
    print("probe accuracy: %.4f" % acc)
    return acc


class Trainer:
    def __init__(self, model, optimizer, cfg):
        self.model, self.optimizer, self.cfg = model, optimizer, cfg

    def train(self, x, edge_index):
        self.model.train()
        self.optimizer.zero_grad()
        e1 = dropout_edges(edge_index, self.cfg["drop_edge_rate_1"])
        e2 = dropout_edges(edge_index, self.cfg["drop_edge_rate_2"])
        x1 = drop_feature(x, self.cfg["drop_feature_rate_1"])
        x2 = drop_feature(x, self.cfg["drop_feature_rate_2"])
        z1 = self.model(x1, e1)
        z2 = self.model(x2, e2)
        loss = self.model.loss(z1, z2, batch_size=0)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def test(self, x, edge_index, y):
        self.model.eval()
        z = self.model(x, edge_index)  # expect: TML003
        return label_classification(z, y, ratio=0.1)


def main(model, data, cfg):
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["learning_rate"], weight_decay=cfg["weight_decay"])
    trainer = Trainer(model, optimizer, cfg)
    for epoch in range(1, cfg["num_epochs"] + 1):
        loss = trainer.train(data.x, data.edge_index)
        print(f"(T) | Epoch={epoch:03d}, loss={loss:.4f}")
    print("=== Final ===")
    return trainer.test(data.x, data.edge_index, data.y)
