# Source: https://github.com/mindee/doctr/issues/1356
# Report: calling an OCR predictor on image after image makes process memory climb and never come back; profiling points at the CRNN recognition model, whose feature extractor is still recording gradients during inference
# Shape: same recognizer, but predict() is decorated with @torch.inference_mode(), so the CRNN forward records no graph and nothing outlives the call
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


VOCAB = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-'.,"


class CRNN(nn.Module):
    def __init__(self, vocab_size, hidden=128):
        super().__init__()
        self.feat_extractor = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(),
            nn.MaxPool2d((2, 1)),
        )
        self.rnn = nn.LSTM(256 * 4, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.classifier = nn.Linear(2 * hidden, vocab_size + 1)

    def forward(self, x):
        feats = self.feat_extractor(x)               # B, C, H, W
        b, c, h, w = feats.shape
        feats = feats.permute(0, 3, 1, 2).reshape(b, w, c * h)
        seq, _ = self.rnn(feats)
        return self.classifier(seq)                  # B, W, vocab + 1


def ctc_decode(indices, blank):
    words = []
    for row in indices:
        chars, prev = [], blank
        for k in row:
            if k != prev and k != blank:
                chars.append(VOCAB[k])
            prev = k
        words.append("".join(chars))
    return words


class WordRecognizer:
    def __init__(self, weights, device="cuda"):
        self.device = device
        self.model = CRNN(len(VOCAB)).to(device)
        self.model.load_state_dict(torch.load(weights, map_location=device))
        self.model.eval()

    @torch.inference_mode()
    def predict(self, crops):
        batch = torch.from_numpy(np.stack(crops)).permute(0, 3, 1, 2).float().div(255)
        batch = batch.to(self.device)
        logits = self.model(batch)
        best = logits.argmax(-1).cpu().tolist()
        return ctc_decode(best, blank=len(VOCAB))


def read_pages(recognizer, pages):
    """pages: list of lists of HxWx3 uint8 word crops (32x128)."""
    out = []
    for crops in pages:
        out.append(" ".join(recognizer.predict(crops)))
    return out
