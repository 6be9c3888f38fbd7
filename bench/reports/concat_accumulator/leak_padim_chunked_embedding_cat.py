# Source: https://github.com/xiahaifeng1995/PaDiM-Anomaly-Detection-Localization-master/issues/27
# Report: PaDiM test-time embedding construction ran the machine out of CPU memory; the user's chunked rewrite still grew the full embedding tensor with torch.cat on every 32-image chunk
# Shape: chunk loop builds per-chunk multi-layer embeddings and re-concatenates them onto a growing accumulator (None on the first chunk), so every chunk copies everything gathered so far
# Expect: TML008 line 35
from collections import OrderedDict

import torch
import torch.nn.functional as F


def embedding_concat(x, y):
    B, C1, H1, W1 = x.size()
    _, C2, H2, W2 = y.size()
    s = int(H1 / H2)
    x = F.unfold(x, kernel_size=s, dilation=1, stride=s).view(B, C1, -1, H2, W2)
    z = torch.zeros(B, C1 + C2, x.size(2), H2, W2)
    for i in range(x.size(2)):
        z[:, :, i, :, :] = torch.cat((x[:, :, i, :, :], y), 1)
    z = z.view(B, -1, H2 * W2)
    return F.fold(z, kernel_size=s, output_size=(H1, W1), stride=s)


def build_test_embeddings(test_outputs: "OrderedDict[str, torch.Tensor]", idx, chunk=32):
    total = test_outputs["layer1"].shape[0]
    embedding_vectors_all = None
    for start in range(0, total, chunk):
        stop = min(start + chunk, total)
        embedding_vectors = test_outputs["layer1"][start:stop]
        for layer_name in ["layer2", "layer3"]:
            embedding_vectors = embedding_concat(embedding_vectors, test_outputs[layer_name][start:stop])
        embedding_vectors = torch.index_select(embedding_vectors, 1, idx)
        if embedding_vectors_all is None:
            embedding_vectors_all = embedding_vectors
        else:
            embedding_vectors_all = torch.cat([embedding_vectors_all, embedding_vectors], 0)  # expect: TML008
    return embedding_vectors_all


def mahalanobis_scores(embedding_vectors, train_mean, train_cov_inv):
    B, C, H, W = embedding_vectors.size()
    flat = embedding_vectors.view(B, C, H * W)
    delta = flat - train_mean.unsqueeze(0)
    dist = torch.einsum("bci,cdi,bdi->bi", delta, train_cov_inv, delta)
    return dist.clamp_min(0).sqrt().view(B, H, W)
