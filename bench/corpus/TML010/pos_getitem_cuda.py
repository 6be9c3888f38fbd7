# Modelled on: https://github.com/pytorch/pytorch/issues/77159
# Report: users kept num_workers=0 because their Dataset moved each sample to the GPU as its last step, which fails in forked workers.
import torch
from torch.utils.data import DataLoader, Dataset


class SpectrogramDataset(Dataset):
    def __init__(self, clips, labels):
        self.clips = clips
        self.labels = labels

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, idx):
        spec = torch.stft(self.clips[idx], n_fft=400, return_complex=True).abs()
        return spec.cuda(), torch.tensor(self.labels[idx]).cuda()  # expect: TML010


loader = DataLoader(SpectrogramDataset([], []), batch_size=32, num_workers=4)
