# Source: https://github.com/oke-aditya/image_similarity/issues/10
# Report: user questions create_embedding's `embedding = torch.cat((embedding, enc_output), 0)`; the project docs say the encoder outputs of the whole image folder are collected into one (N, 16, 256, 256) tensor
# Shape: create_embedding() appends each batch's CPU encoder output to a list and calls torch.cat once after the loop
# Expect: near-miss: must be silent
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
    chunks = []
    with torch.no_grad():
        for batch_idx, (train_img, _) in enumerate(full_loader):
            train_img = train_img.to(device)
            enc_output = encoder(train_img).cpu()
            chunks.append(enc_output)
    if not chunks:
        return torch.empty((0, *embedding_dim[1:]))
    return torch.cat(chunks, 0)


def export_embeddings(encoder, full_loader, embedding_shape, out_path, device="cuda"):
    embedding = create_embedding(encoder, full_loader, embedding_shape, device)
    numpy_embedding = embedding.cpu().detach().numpy()
    num_images = numpy_embedding.shape[0]
    flattened = numpy_embedding.reshape((num_images, -1))
    np.save(out_path, flattened)
    return flattened.shape
