# Source: https://github.com/snakers4/silero-vad/issues/356
# Report: get_speech_timestamps over a long recording kept consuming RAM until swap: the VAD's recurrent state is carried from window to window with autograd on, so every window's graph chains onto the previous one (fixed by torch.set_grad_enabled(False); resetting states also stopped it)
# Shape: the model keeps its recurrent state on self and rebinds it from its previous value in forward; the caller only keeps .item() probabilities
# Expect: TML005 line 29
import torch
import torch.nn.functional as F
from torch import nn


class StreamingVAD(nn.Module):
    def __init__(self, n_mels=64, hidden=128, sampling_rate=16000):
        super().__init__()
        self.sampling_rate = sampling_rate
        self.frontend = nn.Conv1d(1, n_mels, kernel_size=400, stride=160)
        self.encoder = nn.Sequential(nn.Linear(n_mels, hidden), nn.ReLU())
        self.rnn = nn.GRUCell(hidden, hidden)
        self.head = nn.Linear(hidden, 1)
        self.hidden = hidden
        self.reset_states()

    def reset_states(self, batch_size=1):
        self._state = torch.zeros(batch_size, self.hidden)

    def forward(self, chunk, sr):
        if sr != self.sampling_rate:
            raise ValueError(f"expected {self.sampling_rate} Hz audio, got {sr}")
        spec = self.frontend(chunk.view(1, 1, -1)).abs().mean(dim=-1)
        feats = self.encoder(spec)
        self._state = self.rnn(feats, self._state)  # expect: TML005
        return torch.sigmoid(self.head(self._state)).squeeze()


def get_speech_timestamps(audio, model, threshold=0.5, sampling_rate=16000,
                          window_size_samples=512, min_speech_samples=4000):
    model.reset_states()
    speech_probs = []
    for start in range(0, len(audio), window_size_samples):
        chunk = audio[start:start + window_size_samples]
        if len(chunk) < window_size_samples:
            chunk = F.pad(chunk, (0, window_size_samples - len(chunk)))
        speech_probs.append(model(chunk, sampling_rate).item())

    segments, current = [], None
    for i, p in enumerate(speech_probs):
        if p >= threshold and current is None:
            current = {"start": i * window_size_samples}
        elif p < threshold - 0.15 and current is not None:
            current["end"] = i * window_size_samples
            if current["end"] - current["start"] >= min_speech_samples:
                segments.append(current)
            current = None
    return segments
