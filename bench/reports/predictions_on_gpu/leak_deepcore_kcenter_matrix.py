# Source: https://github.com/PatrickZH/DeepCore/blob/74ec709f5ccba3b1e921b06c6e312d57741de3f8/deepcore/methods/kcentergreedy.py
# Report: audited (no public issue): kCenterGreedy.construct_matrix, the coreset / active-learning selection step, appends every batch's penultimate-layer embedding, still on the GPU, to a Python list and concatenates it on the GPU, so the whole pool's embeddings pile up in device memory batch by batch before the distance matrix is even built
# Shape: kept as in the repository: the embedding comes out of an EmbeddingRecorder module (stored in forward, read as model.embedding_recorder.embedding) under torch.no_grad(), and the appended list is concatenated after the loop
# Expect: TML004 line 53
import numpy as np
import torch
from torch import nn


class EmbeddingRecorder(nn.Module):
    def __init__(self, record_embedding=False):
        super().__init__()
        self.record_embedding = record_embedding

    def forward(self, x):
        if self.record_embedding:
            self.embedding = x
        return x

    def __enter__(self):
        self.record_embedding = True

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.record_embedding = False


def euclidean_dist(x, y):
    return torch.cdist(x, y)


class kCenterGreedy:
    def __init__(self, dst_train, args, model, fraction=0.5, already_selected=()):
        self.dst_train = dst_train
        self.args = args
        self.model = model.to(args.device)  # ResNet18 whose forward ends in self.embedding_recorder(out)
        self.fraction = fraction
        self.n_train = len(dst_train)
        self.already_selected = np.array(already_selected)
        self.metric = euclidean_dist

    def construct_matrix(self, index=None):
        self.model.eval()
        self.model.no_grad = True
        with torch.no_grad():
            with self.model.embedding_recorder:
                matrix = []
                data_loader = torch.utils.data.DataLoader(
                    self.dst_train if index is None else torch.utils.data.Subset(self.dst_train, index),
                    batch_size=self.args.selection_batch,
                    num_workers=self.args.workers)
                for i, (inputs, _) in enumerate(data_loader):
                    self.model(inputs.to(self.args.device))
                    matrix.append(self.model.embedding_recorder.embedding)  # expect: TML004
        self.model.no_grad = False
        return torch.cat(matrix, dim=0)

    def select(self, k_center_greedy):
        selection_result = np.array([], dtype=np.int64)
        for c in range(self.args.num_classes):
            class_index = np.arange(self.n_train)[self.dst_train.targets == c]
            budget = round(self.fraction * len(class_index))
            chosen = k_center_greedy(self.construct_matrix(class_index), budget=budget,
                                     metric=self.metric, device=self.args.device, index=class_index,
                                     already_selected=self.already_selected[
                                         np.in1d(self.already_selected, class_index)])
            selection_result = np.append(selection_result, chosen)
        return {"indices": selection_result}
