# Source: https://github.com/pytorch/pytorch/issues/2517
# Report: a Dataset that preprocessed samples with its own network on the GPU worked alone but raised "CUDA error: initialization error" once a DataLoader iterated it with workers.
# Shape: the dataset keeps a device and a preprocessing network moved to it in __init__; __getitem__ calls a helper method that sends the sample to that device and runs the network.
# Expect: TML010 line 21
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class PreprocessedDataset(Dataset):
    def __init__(self, samples, labels, preprocess_net: nn.Module, device="cuda"):
        self.samples, self.labels = samples, labels
        self.device = torch.device(device)
        self.preprocess_net = preprocess_net.to(self.device).eval()

    def __len__(self):
        return len(self.samples)

    def _preprocess(self, sample):
        with torch.no_grad():
            return self.preprocess_net(sample.to(self.device).unsqueeze(0)).squeeze(0)  # expect: TML010

    def __getitem__(self, index):
        return self._preprocess(self.samples[index]), self.labels[index]


def make_loader(samples, labels, preprocess_net, batch_size):
    return DataLoader(PreprocessedDataset(samples, labels, preprocess_net), batch_size=batch_size, num_workers=4)
