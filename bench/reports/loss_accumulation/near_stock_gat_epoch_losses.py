# Source: https://github.com/kimkyeonghun/MTSR/blob/b0b81f99d933564dae8b3d64d1422bf28c34f6a3/models/trainer.py
# Report: audit: the stock-graph GAT trainer sums `train_loss += loss` with the .item() version commented out, and val_epoch/test_epoch call the model after model.eval() with no no_grad, val_epoch also summing the graph-attached loss for the whole split (a later commit added .item() and torch.no_grad())
# Shape: fixed as the repository later did: train_loss sums loss.item(); val/test loops run inside torch.no_grad(), where val_loss may stay a (graph-free) tensor sum
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler


def make_loader(dataset, batch_size, collate_fn):
    return DataLoader(dataset, sampler=RandomSampler(dataset), batch_size=batch_size, collate_fn=collate_fn)


def train_epoch(args, model, train_set, adj, optimizer, collate_fn):
    loader = make_loader(train_set, args.train_batch_size, collate_fn)
    train_loss, steps = 0.0, 0
    model.train()
    for price, text, label, _, _ in loader:
        loss, _ = model(text, price, label, adj, train=True)
        loss.backward()
        steps += 1
        train_loss += loss.item()
        optimizer.step()
        optimizer.zero_grad()
    return train_loss / steps


def val_epoch(args, model, val_set, adj, collate_fn):
    loader = make_loader(val_set, args.val_batch_size, collate_fn)
    val_loss, steps = 0.0, 0
    preds, labels = [], []
    model.eval()
    with torch.no_grad():
        for price, text, label, _, _ in loader:
            loss, logits = model(text.unsqueeze(0), price.unsqueeze(0), label, adj, train=False)
            predicted = torch.argmax(torch.sigmoid(logits), dim=1)
            steps += 1
            val_loss += loss
            preds.extend(predicted.detach().cpu().tolist())
            labels.extend(label[0].cpu().tolist())
    return val_loss / steps, preds, labels


def test_epoch(args, model, test_set, adj, collate_fn):
    loader = make_loader(test_set, args.test_batch_size, collate_fn)
    preds, labels = [], []
    model.eval()
    with torch.no_grad():
        for price, text, label, _, _ in loader:
            _, logits = model(text.unsqueeze(0), price.unsqueeze(0), label, adj, train=False)
            preds.extend(torch.argmax(torch.sigmoid(logits), dim=1).detach().cpu().tolist())
            labels.extend(label[0].cpu().tolist())
    return preds, labels


def mcc(preds, labels):
    tp = sum(1 for p, l in zip(preds, labels) if p == 1 and l == 1)
    tn = sum(1 for p, l in zip(preds, labels) if p == 0 and l == 0)
    fp = sum(1 for p, l in zip(preds, labels) if p == 1 and l == 0)
    fn = sum(1 for p, l in zip(preds, labels) if p == 0 and l == 1)
    denom = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
    return (tp * tn - fp * fn) / denom if denom else 0.0


def fit(args, model, splits, adj, optimizer, collate_fn, logger):
    best_mcc = -1.0
    for epoch in range(args.n_epochs):
        train_loss = train_epoch(args, model, splits["train"], adj, optimizer, collate_fn)
        val_loss, preds, labels = val_epoch(args, model, splits["val"], adj, collate_fn)
        val_mcc = mcc(preds, labels)
        logger.info("epoch %d train %.4f val %.4f mcc %.3f", epoch + 1, train_loss, val_loss, val_mcc)
        if val_mcc > best_mcc:
            best_mcc = val_mcc
            torch.save(model.state_dict(), f"{args.save_dir}/model_{epoch + 1}.pt")
            test_preds, test_labels = test_epoch(args, model, splits["test"], adj, collate_fn)
            logger.info("test mcc %.3f", mcc(test_preds, test_labels))
    return best_mcc
