# Source: https://github.com/SPOT-TECHNOLOGIES/ai-autoencoder-pack-similarities/blob/4441ae01b4967b296afad148b8a067a457f6600b/utils/create_embedding.py
# Report: audit of an autoencoder image-similarity service: create_embedding() encodes the whole catalogue under no_grad and grows the embedding bank with torch.cat((embedding, enc_output), 0) once per batch, re-copying the full bank every step
# Shape: ConvEncoder + create_embedding(encoder, loader, embedding_dim, device) helper returning the flattened bank; a SimilarityIndex class fits sklearn NearestNeighbors on it and answers queries
# Expect: TML008 line 37
import numpy as np
import torch
import torch.nn as nn
from sklearn.neighbors import NearestNeighbors


class ConvEncoder(nn.Module):
    def __init__(self, channels=(3, 16, 32, 64, 128, 256)):
        super().__init__()
        layers = []
        for c_in, c_out in zip(channels[:-1], channels[1:]):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def load_encoder(path, device):
    encoder = ConvEncoder()
    encoder.load_state_dict(torch.load(path, map_location=device))
    return encoder.to(device)


def create_embedding(encoder, full_loader, embedding_dim, device):
    """Encode every catalogue image; returns a (N, C, H, W) bank on the CPU."""
    encoder.eval()
    embedding = torch.empty((0, *embedding_dim[1:]))
    with torch.no_grad():
        for train_img, _target_img in full_loader:
            train_img = train_img.to(device)
            enc_output = encoder(train_img).cpu()
            embedding = torch.cat((embedding, enc_output), 0)  # expect: TML008
    return embedding


class SimilarityIndex:
    def __init__(self, encoder, device="cuda", n_neighbors=5):
        self.encoder = encoder
        self.device = device
        self.knn = NearestNeighbors(n_neighbors=n_neighbors, metric="cosine")
        self.flat = None

    def fit(self, full_loader, embedding_dim):
        bank = create_embedding(self.encoder, full_loader, embedding_dim, self.device)
        self.flat = bank.reshape(bank.shape[0], -1).numpy()
        self.knn.fit(self.flat)
        np.save("data/embedding.npy", self.flat)
        return self

    @torch.no_grad()
    def query(self, image):
        self.encoder.eval()
        emb = self.encoder(image.unsqueeze(0).to(self.device)).cpu()
        _, idx = self.knn.kneighbors(emb.reshape(1, -1).numpy())
        return idx[0].tolist()
