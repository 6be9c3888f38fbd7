# Source: https://github.com/pyy0715/Neural-Collaborative-Filtering/blob/0db8c5f4e105440be09a89e5a79e12c98d5119c2/src/evaluate.py
# Report: NeuMF recommender: the leave-one-out HR/NDCG helper scores every test user with a plain forward pass; the training script only calls model.eval() before it, never no_grad.
# Shape: metrics() iterates the test loader and calls model(user, item) with grad enabled, so every batch of 1+num_ng_test candidates saves its embedding/MLP activations for a backward that never comes (peak per batch; only .cpu().tolist() ids are kept).
# Expect: TML003 line 45
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class NeuMF(nn.Module):
    def __init__(self, num_users, num_items, factor_num=32, layers=(64, 32, 16, 8), dropout=0.2):
        super().__init__()
        self.mf_user = nn.Embedding(num_users, factor_num)
        self.mf_item = nn.Embedding(num_items, factor_num)
        self.mlp_user = nn.Embedding(num_users, layers[0] // 2)
        self.mlp_item = nn.Embedding(num_items, layers[0] // 2)
        mlp = []
        for d_in, d_out in zip(layers[:-1], layers[1:]):
            mlp += [nn.Linear(d_in, d_out), nn.ReLU(), nn.Dropout(dropout)]
        self.mlp = nn.Sequential(*mlp)
        self.head = nn.Linear(layers[-1] + factor_num, 1)

    def forward(self, user, item):
        mf = self.mf_user(user) * self.mf_item(item)
        mlp = self.mlp(torch.cat([self.mlp_user(user), self.mlp_item(item)], dim=-1))
        return self.head(torch.cat([mlp, mf], dim=-1)).view(-1)


def hit(ng_item, pred_items):
    return 1 if ng_item in pred_items else 0


def ndcg(ng_item, pred_items):
    if ng_item in pred_items:
        return np.reciprocal(np.log2(pred_items.index(ng_item) + 2))
    return 0


def metrics(model, test_loader, top_k, device):
    HR, NDCG = [], []
    for user, item, _label in test_loader:
        user = user.to(device)
        item = item.to(device)
        predictions = model(user, item)  # expect: TML003
        _, indices = torch.topk(predictions, top_k)
        recommends = torch.take(item, indices).cpu().numpy().tolist()
        ng_item = item[0].item()
        HR.append(hit(ng_item, recommends))
        NDCG.append(ndcg(ng_item, recommends))
    return np.mean(HR), np.mean(NDCG)


def fit(model, train_loader, test_loader, epochs, top_k, device):
    loss_function = nn.BCEWithLogitsLoss()
    optimizer = optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    best_hr = 0
    for epoch in range(1, epochs + 1):
        model.train()
        for user, item, label in train_loader:
            user, item, label = user.to(device), item.to(device), label.float().to(device)
            optimizer.zero_grad()
            loss = loss_function(model(user, item), label)
            loss.backward()
            optimizer.step()
        model.eval()
        HR, NDCG = metrics(model, test_loader, top_k, device)
        print(f"epoch {epoch:03d} HR={HR:.3f} NDCG={NDCG:.3f}")
        if HR > best_hr:
            best_hr = HR
            torch.save(model.state_dict(), "ncf_best.pth")
    return best_hr
