# Source: https://github.com/pytorch/pytorch/issues/77159
# Report: the analysis in the report: keep the Dataset on the CPU and transfer the batch to the GPU outside of it, which lets num_workers>0 work.
# Shape: same dataset returning CPU tensors (pinned by the loader); the same to_device helper is called on the batch in the training loop.
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader, Dataset

DEVICE = torch.device("cuda")


def to_device(sample):
    return {key: value.to(DEVICE, non_blocking=True) for key, value in sample.items()}


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
        return {"spec": spec.log1p(), "label": torch.tensor(self.labels[index])}


def train(model, waveforms, labels, optimizer, epochs=10):
    loader = DataLoader(SpectrogramDataset(waveforms, labels), batch_size=32, shuffle=True,
                        num_workers=4, pin_memory=True)
    for epoch in range(epochs):
        for batch in loader:
            batch = to_device(batch)
            loss = torch.nn.functional.cross_entropy(model(batch["spec"]), batch["label"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
