# Source: https://github.com/HaojHuang/Edge-Grasp-Network/blob/1d93545cecee41bc6ecd4bf1d83b218eac132165/dataset/train.py
# Report: audit: test() switches the point-cloud grasp scorer to eval() and runs every test batch without no_grad, and train() steps Adam each batch without ever resetting gradients
# Shape: same train()/test() helpers, but train() clears grads before each backward and test() is decorated with @torch.no_grad(); only .item() counts leave either loop
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F


def gather_scores(scores, batch):
    pos = scores[batch.positive_idx]
    neg = scores[batch.negative_idx]
    target = torch.cat([torch.ones_like(pos), torch.zeros_like(neg)])
    return torch.cat([pos, neg]), target, pos, neg


def count_correct(pos, neg):
    return (pos > 0.5).sum().item() + (neg < 0.5).sum().item()


def train(model, loader, optimizer, device, pos_weight=1.1):
    model.to(device)
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for batch in loader:
        batch = batch.to(device)
        optimizer.zero_grad(set_to_none=True)
        scores = model(batch.pos, batch.batch, batch.normals)
        pred, target, pos, neg = gather_scores(scores, batch)
        weights = torch.ones_like(target)
        weights[: pos.numel()] = pos_weight
        loss = F.binary_cross_entropy(pred, target, weight=weights)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        correct += count_correct(pos, neg)
        seen += pred.numel()
    return total_loss / len(loader), correct / seen


@torch.no_grad()
def test(model, loader, device):
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    for batch in loader:
        batch = batch.to(device)
        scores = model(batch.pos, batch.batch, batch.normals)
        pred, target, pos, neg = gather_scores(scores, batch)
        loss = F.binary_cross_entropy(pred, target)
        total_loss += loss.item()
        correct += count_correct(pos, neg)
        seen += pred.numel()
    return total_loss / len(loader), correct / seen


def print_info(info, log_file=None):
    msg = ("epoch {epoch}/{epochs} ({secs:.1f}s) train {tr_loss:.4f}/{tr_acc:.3f} "
           "test {te_loss:.4f}/{te_acc:.3f}").format(**info)
    print(msg)
    if log_file is not None:
        with open(log_file, "a") as fh:
            fh.write(msg + "\n")


def run(model, train_loader, test_loader, epochs, optimizer, log_file=None):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for epoch in range(1, epochs + 1):
        start = time.time()
        tr_loss, tr_acc = train(model, train_loader, optimizer, device)
        secs = time.time() - start
        te_loss, te_acc = test(model, test_loader, device)
        print_info(dict(epoch=epoch, epochs=epochs, secs=secs, tr_loss=tr_loss,
                        tr_acc=tr_acc, te_loss=te_loss, te_acc=te_acc), log_file)
