# Source: https://github.com/bj1103/ML2021/blob/48f4464e447668104db28a6737f37b0010340d7e/HW3/b07902114_hw3/hw3.py
# Report: audit of a semi-supervised food-classification homework (fixed): get_pseudo_labels grew two GPU tensors with torch.cat((acc, batch)) per batch; here the per-batch maxima are moved to the CPU, appended to lists and concatenated once after the loop
# Shape: same get_pseudo_labels / fit structure; lists of CPU chunks and a single torch.cat per list after the loop
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.data import ConcatDataset, DataLoader, Subset


def get_pseudo_labels(dataset, model, threshold=0.9, batch_size=128):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    model.eval()
    softmax = nn.Softmax(dim=-1)
    prob_chunks, label_chunks = [], []
    for img, _ in loader:
        with torch.no_grad():
            logits = model(img.to(device))
        max_prob, max_idx = torch.max(softmax(logits), 1)
        prob_chunks.append(max_prob.cpu())
        label_chunks.append(max_idx.cpu())
    total_probs = torch.cat(prob_chunks)
    pseudo_labels = torch.cat(label_chunks)
    keep = (total_probs > threshold).nonzero(as_tuple=True)[0].tolist()
    labels = pseudo_labels.cpu().tolist()
    dataset.samples = [(path, labels[i]) for i, (path, _) in enumerate(dataset.samples)]
    model.train()
    return Subset(dataset, keep)


def fit(model, train_set, unlabeled_set, valid_loader, config, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["wd"])
    best_acc = 0.0
    for epoch in range(config["epochs"]):
        loader = DataLoader(train_set, batch_size=config["batch_size"], shuffle=True)
        if epoch >= config["semi_start"]:
            pseudo_set = get_pseudo_labels(unlabeled_set, model, config["threshold"])
            loader = DataLoader(ConcatDataset([train_set, pseudo_set]),
                                batch_size=config["batch_size"], shuffle=True)
        model.train()
        for imgs, labels in loader:
            logits = model(imgs.to(device))
            loss = criterion(logits, labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=10)
            optimizer.step()
        model.eval()
        correct, seen = 0, 0
        with torch.no_grad():
            for imgs, labels in valid_loader:
                pred = model(imgs.to(device)).argmax(dim=-1).cpu()
                correct += (pred == labels).sum().item()
                seen += labels.numel()
        if correct / seen > best_acc:
            best_acc = correct / seen
            torch.save(model.state_dict(), "model.ckpt")
    return best_acc
