# Modelled on: https://github.com/catalyst-team/catalyst/pull/81
# Report: the fix: loop through the module's parameters and set requires_grad=False on each.
import torch.nn as nn


class FrozenEncoderClassifier(nn.Module):
    def __init__(self, encoder, hidden, n_classes):
        super().__init__()
        self.encoder = encoder
        for param in self.encoder.parameters():
            param.requires_grad = False
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))
