# Modelled on: https://github.com/facebookresearch/fairseq/issues/4702
# Report: parameters the user meant to freeze were still updated after training.
import torch.nn as nn


class FrozenEncoderClassifier(nn.Module):
    def __init__(self, encoder, hidden, n_classes):
        super().__init__()
        self.encoder = encoder
        self.encoder.requires_grad = False  # expect: TML016
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))
