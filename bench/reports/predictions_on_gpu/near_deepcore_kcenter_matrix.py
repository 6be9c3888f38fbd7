# Source: https://github.com/PatrickZH/DeepCore/blob/74ec709f5ccba3b1e921b06c6e312d57741de3f8/deepcore/methods/kcentergreedy.py
# Report: audited (no public issue): kCenterGreedy.construct_matrix appends every batch's GPU embedding to a list and concatenates it on the GPU, so the pool's embeddings pile up in device memory batch by batch
# Shape: the same file's old_construct_matrix, kept: one matrix of the final size is allocated on the device before the loop and each batch's embedding is written into its slice (no growing list, no torch.cat copy); the k-center search still runs on the GPU
# Expect: near-miss: must be silent
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
        self.emb_dim = self.model.get_last_layer().in_features

    def construct_matrix(self, index=None):
        self.model.eval()
        self.model.no_grad = True
        with torch.no_grad():
            with self.model.embedding_recorder:
                sample_num = self.n_train if index is None else len(index)
                matrix = torch.zeros([sample_num, self.emb_dim], requires_grad=False).to(self.args.device)
                data_loader = torch.utils.data.DataLoader(
                    self.dst_train if index is None else torch.utils.data.Subset(self.dst_train, index),
                    batch_size=self.args.selection_batch,
                    num_workers=self.args.workers)
                bs = self.args.selection_batch
                for i, (inputs, _) in enumerate(data_loader):
                    self.model(inputs.to(self.args.device))
                    matrix[i * bs:min((i + 1) * bs, sample_num)] = self.model.embedding_recorder.embedding
        self.model.no_grad = False
        return matrix

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
