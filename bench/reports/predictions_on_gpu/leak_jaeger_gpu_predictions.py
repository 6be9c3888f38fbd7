# Source: https://github.com/Yasas1994/Jaeger/pull/30
# Report: Jaeger's inference accumulated every batch's predictions as GPU tensors before copying them to the CPU, so GPU memory grew with dataset size until it ran out.
# Shape: logits and labels of every batch are appended to lists while still on the GPU and only moved to the CPU after the loop.
# Expect: TML004 lines 18, 19
import numpy as np
import torch


@torch.no_grad()
def predict(model, loader, device="cuda"):
    model.eval()
    all_logits = []
    all_labels = []
    for batch in loader:
        seqs = batch["seq"].to(device, non_blocking=True)
        labels = batch["label"].to(device, non_blocking=True)
        logits = model(seqs)
        all_logits.append(logits)  # expect: TML004
        all_labels.append(labels)  # expect: TML004
    logits = torch.cat(all_logits).cpu().numpy()
    labels = torch.cat(all_labels).cpu().numpy()
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return probs, labels
