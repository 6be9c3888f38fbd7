# Source: https://github.com/Yasas1994/Jaeger/pull/30
# Report: Jaeger's inference accumulated every batch's predictions as GPU tensors before copying them to the CPU, so GPU memory grew with dataset size until it ran out.
# Shape: the fixed loop moves each batch's logits and labels to the CPU right after the forward pass, so the lists hold host tensors only.
# Expect: near-miss: must be silent
import numpy as np
import torch


@torch.no_grad()
def predict(model, loader, device="cuda"):
    model.eval()
    all_logits = []
    all_labels = []
    for batch in loader:
        seqs = batch["seq"].to(device, non_blocking=True)
        labels = batch["label"]
        logits = model(seqs)
        all_logits.append(logits.cpu())
        all_labels.append(labels.cpu())
    logits = torch.cat(all_logits).numpy()
    labels = torch.cat(all_labels).numpy()
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return probs, labels
