# Source: https://github.com/KinWaiCheuk/nnAudio/issues/129
# Report: computing a GPU spectrogram layer inside the Dataset fails with "cannot re-initialize CUDA in forked subprocess" once the DataLoader uses worker processes; the maintainer's advice is to load waveforms in the loader and run the spectrogram layer on the batch afterwards
# Shape: __getitem__ returns a CPU waveform; the training loop moves the whole batch to the GPU and runs the nnAudio layer there, outside the workers
# Expect: near-miss: must be silent
import random

import soundfile as sf
import torch
import torch.nn as nn
from nnAudio.features import MelSpectrogram
from torch.utils.data import DataLoader, Dataset


class ClipDataset(Dataset):
    def __init__(self, items, sr=22050, clip_seconds=4.0):
        self.items = items  # list of (path, label)
        self.sr = sr
        self.n_samples = int(sr * clip_seconds)

    def __len__(self):
        return len(self.items)

    def _load(self, path):
        audio, _ = sf.read(path, dtype="float32", always_2d=True)
        audio = torch.from_numpy(audio.mean(axis=1))
        if audio.numel() < self.n_samples:
            audio = nn.functional.pad(audio, (0, self.n_samples - audio.numel()))
        start = random.randint(0, audio.numel() - self.n_samples)
        return audio[start:start + self.n_samples]

    def __getitem__(self, idx):
        path, label = self.items[idx]
        wave = self._load(path)
        return wave, label


def train(model, items, sr=22050, epochs=30, batch_size=32, device="cuda"):
    loader = DataLoader(ClipDataset(items, sr=sr), batch_size=batch_size, shuffle=True,
                        num_workers=8, drop_last=True, pin_memory=True)
    to_mel = MelSpectrogram(sr=sr, n_fft=2048, hop_length=512, n_mels=128, verbose=False)
    to_mel = to_mel.to(device)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        running = 0.0
        for wave, label in loader:
            wave = wave.cuda(non_blocking=True)
            label = label.to(device)
            mel = torch.log1p(to_mel(wave))
            optimizer.zero_grad()
            loss = criterion(model(mel.unsqueeze(1)), label)
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: loss {running / len(loader):.4f}")
