# Source: https://github.com/pytorch/pytorch/issues/77159
# Report: teams kept num_workers=0 and under-used their GPUs because num_workers>0 failed with "Cannot re-initialize CUDA in forked subprocess"; their custom Dataset moved each sample to the GPU as its final step.
# Shape: __getitem__ ends by calling a project helper that moves every tensor of the sample dict to the GPU.
# Expect: TML010 line 28
import torch
from torch.utils.data import DataLoader, Dataset

DEVICE = torch.device("cuda")


def to_device(sample):
    return {key: value.to(DEVICE) for key, value in sample.items()}


class SpectrogramDataset(Dataset):
    def __init__(self, waveforms, labels, n_fft=400):
        self.waveforms = waveforms
        self.labels = labels
        self.window = torch.hann_window(n_fft)
        self.n_fft = n_fft

    def __len__(self):
        return len(self.waveforms)

    def __getitem__(self, index):
        spec = torch.stft(self.waveforms[index], self.n_fft, window=self.window, return_complex=True).abs()
        sample = {"spec": spec.log1p(), "label": torch.tensor(self.labels[index])}
        return to_device(sample)  # expect: TML010


def make_loader(waveforms, labels):
    return DataLoader(SpectrogramDataset(waveforms, labels), batch_size=32, shuffle=True, num_workers=4)
