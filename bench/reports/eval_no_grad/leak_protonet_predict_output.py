# Source: https://github.com/mit-ll-responsible-ai/equine/issues/182
# Report: EquineProtonet.predict / EquineGP.predict run the embedding network with grad enabled; the returned output object keeps classes and embeddings with their grad_fn, so the whole graph lives as long as the caller keeps the output.
# Shape: a `predict` method on a model wrapper class computes embeddings and returns them inside a dataclass; the caller batches over a test set and keeps every output.
# Expect: TML003 line 36; TML001 line 47
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ProtoOutput:
    classes: torch.Tensor
    ood_scores: torch.Tensor
    embeddings: torch.Tensor


class ProtonetWrapper(nn.Module):
    def __init__(self, embedding_model: nn.Module, emb_dim: int):
        super().__init__()
        self.embedding_model = embedding_model
        self.emb_dim = emb_dim
        self.support_embeddings = {}
        self.temperature = 1.0

    def forward(self, x):
        return self.embedding_model(x)

    def _class_distances(self, emb):
        protos = torch.stack([s.mean(dim=0) for s in self.support_embeddings.values()])
        return torch.cdist(emb, protos)

    def predict(self, samples: torch.Tensor) -> ProtoOutput:
        self.eval()
        embeddings = self.embedding_model(samples)  # expect: TML003
        dists = self._class_distances(embeddings)
        probs = F.softmax(-dists / self.temperature, dim=1)
        ood = dists.min(dim=1).values
        return ProtoOutput(classes=probs, ood_scores=ood, embeddings=embeddings)


def score_dataset(wrapper: ProtonetWrapper, test_x: torch.Tensor, batch_size: int = 512):
    outputs = []
    for start in range(0, test_x.shape[0], batch_size):
        out = wrapper.predict(test_x[start:start + batch_size])
        outputs.append(out)  # expect: TML001
    classes = torch.cat([o.classes for o in outputs])
    embeddings = torch.cat([o.embeddings for o in outputs])
    return classes, embeddings
