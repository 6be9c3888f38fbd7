# Source: https://github.com/ahmetius/LP-DeepSSL/blob/294cf4f86ade1c5db39fa942d1801698464b0816/helpers.py
# Report: label-propagation SSL, fixed: the feature-bank pass over the whole train set runs under @torch.no_grad() after model.eval()
# Shape: the decorator disables grad for both forward branches; features are moved to the CPU per batch and concatenated once after the loop
# Expect: near-miss: must be silent
import faiss
import numpy as np
import torch
import torch.nn.functional as F


def build_knn_graph(X, k=50):
    d = X.shape[1]
    index = faiss.IndexFlatIP(d)
    faiss.normalize_L2(X)
    index.add(X)
    sims, nbrs = index.search(X, k + 1)
    return sims[:, 1:] ** 3, nbrs[:, 1:]


def propagate(sims, nbrs, labels, labeled_idx, num_classes, alpha=0.99, iters=20):
    n = len(labels)
    Y = np.zeros((n, num_classes), dtype=np.float32)
    Y[labeled_idx, labels[labeled_idx]] = 1.0
    Z = Y.copy()
    for _ in range(iters):
        Z = alpha * (sims[..., None] * Z[nbrs]).sum(1) + (1 - alpha) * Y
    probs = Z / np.maximum(Z.sum(1, keepdims=True), 1e-8)
    return probs.argmax(1), 1.0 - (-(probs * np.log(probs + 1e-8)).sum(1) / np.log(num_classes))


@torch.no_grad()
def extract_features(train_loader, model, isMT=False):
    model.eval()
    embeddings_all, labels_all = [], []

    for i, (batch_input, target, weight, c_weight) in enumerate(train_loader):
        if isMT:
            X = batch_input[0]
        else:
            X = batch_input
        X = X.cuda()
        y = target.cuda(non_blocking=True)

        if isMT:
            _, _, feats = model(X)
        else:
            _, feats = model(X)

        embeddings_all.append(feats.data.cpu())
        labels_all.append(y.data.cpu())

    embeddings_all = np.asarray(torch.cat(embeddings_all).numpy())
    labels_all = torch.cat(labels_all).numpy()
    return embeddings_all, labels_all


def update_pseudo_labels(train_loader, model, dataset, num_classes, isMT=False):
    feats, labels = extract_features(train_loader, model, isMT=isMT)
    sims, nbrs = build_knn_graph(feats)
    p_labels, p_weights = propagate(sims, nbrs, labels, np.asarray(dataset.labeled_idx), num_classes)
    dataset.p_labels = p_labels
    dataset.p_weights = p_weights
    model.train()
    return p_labels
