# Source: https://github.com/WangYueFt/dgcnn/blob/master/pytorch/main.py
# Report: DGCNN ModelNet40 script: the per-epoch test pass inside train() (and the standalone test()) run the model after model.eval() with autograd still on
# Shape: model.eval() then `logits = model(data)` over test_loader with no no_grad; only loss.item() and preds.detach().cpu().numpy() are kept, so no growth, but every test batch saves the EdgeConv activations for a backward that never comes
# Expect: TML003 lines 89, 116
import numpy as np
import sklearn.metrics as metrics
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import CosineAnnealingLR


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    return (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]


class DGCNN(nn.Module):
    def __init__(self, k=20, emb_dims=1024, n_cls=40):
        super().__init__()
        self.k = k
        self.edge = nn.Sequential(nn.Conv2d(6, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
        self.emb = nn.Sequential(nn.Conv1d(64, emb_dims, 1, bias=False), nn.BatchNorm1d(emb_dims), nn.LeakyReLU(0.2))
        self.head = nn.Sequential(nn.Linear(emb_dims * 2, 256), nn.Dropout(0.5), nn.Linear(256, n_cls))

    def forward(self, x):
        b, _, n = x.shape
        idx = knn(x, self.k)
        nbrs = x.transpose(2, 1)[torch.arange(b, device=x.device)[:, None, None], idx]
        center = x.transpose(2, 1).unsqueeze(2).expand(-1, -1, self.k, -1)
        feat = torch.cat([nbrs - center, center], dim=3).permute(0, 3, 1, 2)
        x1 = self.edge(feat).max(dim=-1)[0]
        x = self.emb(x1)
        x = torch.cat([F.adaptive_max_pool1d(x, 1).view(b, -1), F.adaptive_avg_pool1d(x, 1).view(b, -1)], 1)
        return self.head(x)


def cal_loss(pred, gold, smoothing=True):
    gold = gold.contiguous().view(-1)
    if smoothing:
        eps = 0.2
        n_class = pred.size(1)
        one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
        one_hot = one_hot * (1 - eps) + (1 - one_hot) * eps / (n_class - 1)
        return -(one_hot * F.log_softmax(pred, dim=1)).sum(dim=1).mean()
    return F.cross_entropy(pred, gold, reduction="mean")


def train(args, train_loader, test_loader, io):
    device = torch.device("cuda" if args.cuda else "cpu")
    model = nn.DataParallel(DGCNN(args.k, args.emb_dims).to(device))
    opt = optim.SGD(model.parameters(), lr=args.lr * 100, momentum=args.momentum, weight_decay=1e-4)
    scheduler = CosineAnnealingLR(opt, args.epochs, eta_min=args.lr)
    criterion = cal_loss
    best_test_acc = 0
    for epoch in range(args.epochs):
        scheduler.step()
        train_loss = 0.0
        count = 0.0
        model.train()
        train_pred, train_true = [], []
        for data, label in train_loader:
            data, label = data.to(device), label.to(device).squeeze()
            data = data.permute(0, 2, 1)
            batch_size = data.size()[0]
            opt.zero_grad()
            logits = model(data)
            loss = criterion(logits, label)
            loss.backward()
            opt.step()
            preds = logits.max(dim=1)[1]
            count += batch_size
            train_loss += loss.item() * batch_size
            train_true.append(label.cpu().numpy())
            train_pred.append(preds.detach().cpu().numpy())
        train_acc = metrics.accuracy_score(np.concatenate(train_true), np.concatenate(train_pred))
        io.cprint("Train %d, loss: %.6f, train acc: %.6f" % (epoch, train_loss / count, train_acc))

        test_loss = 0.0
        count = 0.0
        model.eval()
        test_pred, test_true = [], []
        for data, label in test_loader:
            data, label = data.to(device), label.to(device).squeeze()
            data = data.permute(0, 2, 1)
            batch_size = data.size()[0]
            logits = model(data)  # expect: TML003
            loss = criterion(logits, label)
            preds = logits.max(dim=1)[1]
            count += batch_size
            test_loss += loss.item() * batch_size
            test_true.append(label.cpu().numpy())
            test_pred.append(preds.detach().cpu().numpy())
        test_true = np.concatenate(test_true)
        test_pred = np.concatenate(test_pred)
        test_acc = metrics.accuracy_score(test_true, test_pred)
        avg_per_class_acc = metrics.balanced_accuracy_score(test_true, test_pred)
        io.cprint("Test %d, loss: %.6f, test acc: %.6f, test avg acc: %.6f"
                  % (epoch, test_loss / count, test_acc, avg_per_class_acc))
        if test_acc >= best_test_acc:
            best_test_acc = test_acc
            torch.save(model.state_dict(), "checkpoints/%s/models/model.t7" % args.exp_name)


def test(args, test_loader, io):
    device = torch.device("cuda" if args.cuda else "cpu")
    model = nn.DataParallel(DGCNN(args.k, args.emb_dims).to(device))
    model.load_state_dict(torch.load(args.model_path, map_location=device))
    model = model.eval()
    test_true, test_pred = [], []
    for data, label in test_loader:
        data, label = data.to(device), label.to(device).squeeze()
        data = data.permute(0, 2, 1)
        logits = model(data)  # expect: TML003
        preds = logits.max(dim=1)[1]
        test_true.append(label.cpu().numpy())
        test_pred.append(preds.detach().cpu().numpy())
    test_true = np.concatenate(test_true)
    test_pred = np.concatenate(test_pred)
    io.cprint("Test :: test acc: %.6f, test avg acc: %.6f"
              % (metrics.accuracy_score(test_true, test_pred), metrics.balanced_accuracy_score(test_true, test_pred)))
