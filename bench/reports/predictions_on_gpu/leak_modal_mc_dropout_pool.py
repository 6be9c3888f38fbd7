# Source: https://github.com/modAL-python/modAL/blob/0f978be47fc9be574caa61f8485a7fccc19e5c98/modAL/dropout.py
# Report: MC-dropout active-learning query splits the unlabeled pool into chunks "to bound memory", but keeps every chunk's probabilities on the GPU until the whole pool is done
# Shape: probas.append(prediction) under no_grad: one device tensor per pool chunk piles up across the inner loop, so GPU memory scales with the pool size, not the chunk size
# Expect: TML004 line 46
import numpy as np
import torch
from torch import nn


def toggle_dropout(module, indexes, train_mode):
    layers = list(module.modules())
    for idx in indexes or range(len(layers)):
        layer = layers[idx]
        if isinstance(layer, nn.Dropout):
            layer.train(train_mode)


def to_numpy(t):
    return t.detach().cpu().numpy()


def mc_predictions(estimator, pool, dropout_idx=(), n_passes=50, chunk=1000):
    """Run n_passes stochastic forward passes over the pool; chunk limits the memory of one pass."""
    assert n_passes > 0 and chunk > 0
    module = estimator.module_
    device = estimator.device
    toggle_dropout(module, dropout_idx, True)

    if isinstance(pool, dict):
        pieces = []
        for key, value in pool.items():
            for j, part in enumerate(torch.split(value, chunk)):
                if len(pieces) <= j:
                    pieces.append({})
                pieces[j][key] = part
    else:
        pieces = torch.split(pool, chunk)

    runs = []
    for _ in range(n_passes):
        probas = []
        for piece in pieces:
            with torch.no_grad():
                logits = module(piece.to(device))
                prediction = logits.softmax(-1)
                probas.append(prediction)  # expect: TML004
        runs.append(to_numpy(torch.cat(probas)))

    toggle_dropout(module, dropout_idx, False)
    return runs


def bald(runs):
    stacked = np.stack(runs)
    mean = stacked.mean(0)
    h_mean = -(mean * np.log(mean + 1e-12)).sum(-1)
    mean_h = -(stacked * np.log(stacked + 1e-12)).sum(-1).mean(0)
    return h_mean - mean_h


def query(estimator, pool, n_instances=10):
    scores = bald(mc_predictions(estimator, pool))
    return np.argsort(-scores)[:n_instances]
