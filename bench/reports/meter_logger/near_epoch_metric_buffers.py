# Source: https://cloud.tencent.com/developer/article/2565125
# Report: blog post: GPU memory crept up 20-50 MB per step until CUDA OOM in a multi-label training run; cause was keeping grad-carrying logits/loss (and device labels) in Python lists for epoch-level F1/PR curves and loss plots, fixed with .detach().cpu() / .item()
# Shape: the blog's fixed version: same three run-long buffers, but each step stores logits.detach().cpu(), labels.cpu() and loss.item()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def gpu_mb():
    return torch.cuda.memory_allocated() / 1024 ** 2


def multilabel_f1(logits, labels, thr=0.5):
    pred = (torch.sigmoid(logits) > thr).float()
    tp = (pred * labels).sum()
    precision = tp / pred.sum().clamp(min=1)
    recall = tp / labels.sum().clamp(min=1)
    return float(2 * precision * recall / (precision + recall).clamp(min=1e-8))


def run(epochs=3, device="cuda"):
    x = torch.randn(2000, 3, 224, 224)
    y = (torch.rand(2000, 10) > 0.5).float()
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    logits_buf, labels_buf, loss_hist = [], [], []  # kept for epoch F1 / PR curves / loss plot
    for epoch in range(epochs):
        for step, (bx, by) in enumerate(loader, 1):
            bx, by = bx.to(device), by.to(device)
            opt.zero_grad(set_to_none=True)
            logits = net(bx)
            loss = F.binary_cross_entropy_with_logits(logits, by)
            loss.backward()
            opt.step()
            logits_buf.append(logits.detach().cpu())
            labels_buf.append(by.cpu())
            loss_hist.append(loss.item())
            if step % 50 == 0:
                print(f"epoch {epoch} step {step}, mem={gpu_mb():.1f} MB")
        f1 = multilabel_f1(torch.cat(logits_buf), torch.cat(labels_buf))
        mean_loss = sum(loss_hist) / len(loss_hist)
        print(f"epoch {epoch}: loss={mean_loss:.4f} f1={f1:.3f}")
    return net
