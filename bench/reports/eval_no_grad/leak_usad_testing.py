# Source: https://github.com/manigalati/usad/issues/6
# Report: USAD notebook trained fine but ran out of CUDA memory in testing(); wrapping the call in torch.no_grad() fixed it
# Shape: a testing() helper runs the encoder/decoders with grad enabled and returns a list of per-batch anomaly scores that still hold their graphs
# Expect: TML003 line 50; TML003 line 51; TML001 line 52
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoder(nn.Module):
    def __init__(self, in_size, latent_size):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_size, in_size // 2), nn.ReLU(True),
            nn.Linear(in_size // 2, in_size // 4), nn.ReLU(True),
            nn.Linear(in_size // 4, latent_size), nn.ReLU(True),
        )

    def forward(self, w):
        return self.net(w)


class Decoder(nn.Module):
    def __init__(self, latent_size, out_size):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(latent_size, out_size // 4), nn.ReLU(True),
            nn.Linear(out_size // 4, out_size // 2), nn.ReLU(True),
            nn.Linear(out_size // 2, out_size), nn.Sigmoid(),
        )

    def forward(self, z):
        return self.net(z)


class UsadModel(nn.Module):
    def __init__(self, w_size, z_size):
        super().__init__()
        self.encoder = Encoder(w_size, z_size)
        self.decoder1 = Decoder(z_size, w_size)
        self.decoder2 = Decoder(z_size, w_size)


def testing(model, test_loader, alpha=0.5, beta=0.5):
    results = []
    for [batch] in test_loader:
        batch = batch.to(device)
        w1 = model.decoder1(model.encoder(batch))  # expect: TML003
        w2 = model.decoder2(model.encoder(w1))  # expect: TML003
        results.append(alpha * torch.mean((batch - w1) ** 2, axis=1) + beta * torch.mean((batch - w2) ** 2, axis=1))  # expect: TML001
    return results


def score_windows(model, test_loader):
    results = testing(model, test_loader, alpha=0.5, beta=0.5)
    y_pred = np.concatenate([
        torch.stack(results[:-1]).flatten().detach().cpu().numpy(),
        results[-1].flatten().detach().cpu().numpy(),
    ])
    return y_pred
