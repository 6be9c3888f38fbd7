# Source: https://github.com/oke-aditya/image_similarity/issues/10
# Report: user questions create_embedding's `embedding = torch.cat((embedding, enc_output), 0)`; the project docs say the encoder outputs of the whole image folder are collected into one (N, 16, 256, 256) tensor
# Shape: create_embedding() grows one accumulator with torch.cat every batch (CPU copies under no_grad), re-copying everything gathered so far; train_step kept for context
# Expect: TML008 line 29
import numpy as np
import torch


def train_step(encoder, decoder, train_loader, loss_fn, optimizer, device):
    encoder.train()
    decoder.train()
    for train_img, target_img in train_loader:
        train_img, target_img = train_img.to(device), target_img.to(device)
        optimizer.zero_grad()
        dec_output = decoder(encoder(train_img))
        loss = loss_fn(dec_output, target_img)
        loss.backward()
        optimizer.step()
    return loss.item()


def create_embedding(encoder, full_loader, embedding_dim, device):
    encoder.eval()
    embedding = torch.randn(embedding_dim)
    with torch.no_grad():
        for batch_idx, (train_img, _) in enumerate(full_loader):
            train_img = train_img.to(device)
            enc_output = encoder(train_img).cpu()
            embedding = torch.cat((embedding, enc_output), 0)  # expect: TML008
    return embedding


def export_embeddings(encoder, full_loader, embedding_shape, out_path, device="cuda"):
    embedding = create_embedding(encoder, full_loader, embedding_shape, device)
    numpy_embedding = embedding.cpu().detach().numpy()
    num_images = numpy_embedding.shape[0]
    flattened = numpy_embedding.reshape((num_images, -1))
    np.save(out_path, flattened)
    return flattened.shape
