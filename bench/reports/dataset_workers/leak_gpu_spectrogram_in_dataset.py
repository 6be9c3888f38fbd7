# Source: https://github.com/KinWaiCheuk/nnAudio/issues/129
# Report: computing a GPU spectrogram layer inside the Dataset fails with "cannot re-initialize CUDA in forked subprocess" once the DataLoader uses worker processes; the maintainer's advice is to load waveforms in the loader and run the spectrogram layer on the batch afterwards
# Shape: __getitem__ moves each waveform to the GPU with .cuda() and runs the nnAudio layer there, so every DataLoader worker touches CUDA
# Expect: TML010 line 35
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
        self.to_mel = MelSpectrogram(sr=sr, n_fft=2048, hop_length=512, n_mels=128, verbose=False)
        self.to_mel = self.to_mel.to("cuda")

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
        wave = self._load(path).cuda()  # expect: TML010
        mel = self.to_mel(wave.unsqueeze(0))
        mel = torch.log1p(mel).squeeze(0)
        return mel, label


def train(model, items, epochs=30, batch_size=32, device="cuda"):
    loader = DataLoader(ClipDataset(items), batch_size=batch_size, shuffle=True,
                        num_workers=8, drop_last=True)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        running = 0.0
        for mel, label in loader:
            label = label.to(device)
            optimizer.zero_grad()
            loss = criterion(model(mel.unsqueeze(1)), label)
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: loss {running / len(loader):.4f}")
