# Source: https://github.com/yinboc/prototypical-network-pytorch/issues/5
# Report: "CUDA error: out of memory" in the `for i, batch in enumerate(val_loader, 1)` loop of train.py; the maintainer's fix only nulls proto/logits/loss, the validation episodes still run with autograd on
# Shape: model.eval() then two forward passes per validation episode (support prototypes and query embeddings) with no no_grad: every episode saves activations for a backward that never comes
# Expect: TML003 lines 75, 79
import torch
import torch.nn as nn
import torch.nn.functional as F


class Averager:
    def __init__(self):
        self.n = 0
        self.v = 0.0

    def add(self, x):
        self.v = (self.v * self.n + x) / (self.n + 1)
        self.n += 1

    def item(self):
        return self.v


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                         nn.ReLU(), nn.MaxPool2d(2))


class Convnet(nn.Module):
    def __init__(self, x_dim=3, hid=64, z_dim=64):
        super().__init__()
        self.encoder = nn.Sequential(conv_block(x_dim, hid), conv_block(hid, hid),
                                     conv_block(hid, hid), conv_block(hid, z_dim))

    def forward(self, x):
        return self.encoder(x).view(x.size(0), -1)


def euclidean_metric(a, b):
    n, m = a.shape[0], b.shape[0]
    return -((a.unsqueeze(1).expand(n, m, -1) - b.unsqueeze(0).expand(n, m, -1)) ** 2).sum(2)


def count_acc(logits, label):
    return (logits.argmax(1) == label).float().mean().item()


def run(train_loader, val_loader, args):
    model = Convnet().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(1, args.max_epoch + 1):
        model.train()
        tl, ta = Averager(), Averager()
        for i, batch in enumerate(train_loader, 1):
            data, _ = [t.cuda() for t in batch]
            p = args.shot * args.train_way
            data_shot, data_query = data[:p], data[p:]
            proto = model(data_shot).reshape(args.shot, args.train_way, -1).mean(dim=0)
            label = torch.arange(args.train_way).repeat(args.query).cuda()
            logits = euclidean_metric(model(data_query), proto)
            loss = F.cross_entropy(logits, label)
            tl.add(loss.item())
            ta.add(count_acc(logits, label))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            proto = None; logits = None; loss = None

        model.eval()
        vl, va = Averager(), Averager()
        for i, batch in enumerate(val_loader, 1):
            data, _ = [t.cuda() for t in batch]
            p = args.shot * args.test_way
            data_shot, data_query = data[:p], data[p:]

            proto = model(data_shot)  # expect: TML003
            proto = proto.reshape(args.shot, args.test_way, -1).mean(dim=0)
            label = torch.arange(args.test_way).repeat(args.query).cuda()

            logits = euclidean_metric(model(data_query), proto)  # expect: TML003
            loss = F.cross_entropy(logits, label)
            vl.add(loss.item())
            va.add(count_acc(logits, label))
            proto = None; logits = None; loss = None

        print("epoch {}, val loss={:.4f} acc={:.4f}".format(epoch, vl.item(), va.item()))
        torch.save(model.state_dict(), "epoch-last.pth")
