# Source: https://github.com/amyxlu/CPCProt/blob/master/embed_fasta.py
# Report: fix proposed in https://github.com/amyxlu/CPCProt/issues/4 -- the embedder helpers run the encoder under torch.no_grad()
# Shape: the no_grad lives inside the helpers (get_z / get_c) that every pooling method goes through, so the eval loop that calls them keeps no graph
# Expect: near-miss: must be silent
import argparse
import pickle as pkl

import numpy as np
import torch
import torch.nn as nn


class ProteinEmbedder(nn.Module):
    """Pools the outputs of a pretrained CPC encoder into one vector per protein."""

    def __init__(self, cpc, patch_len=11):
        super().__init__()
        self.cpc = cpc
        self.patch_len = patch_len
        self.device = next(cpc.parameters()).device

    def _patch_mask(self, lengths, n_cols):
        n_patches = (lengths / self.patch_len).floor().long()
        cols = torch.arange(n_cols, device=self.device)[None, :]
        return (cols < n_patches[:, None]).int()

    def get_z(self, data, return_mask=False):
        tokens = data["primary"].to(self.device)
        lengths = data["protein_length"].to(self.device)
        with torch.no_grad():
            z = self.cpc(tokens, return_early="z")
        mask = self._patch_mask(lengths, z.shape[1])
        if return_mask:
            return z, mask
        return z

    def get_c(self, data, return_mask=False):
        z, mask = self.get_z(data, return_mask=True)
        with torch.no_grad():
            c = self.cpc.get_c(z)
        if return_mask:
            return c, mask
        return c

    def get_z_mean(self, data):
        z, mask = self.get_z(data, return_mask=True)
        mask = mask[:, :, None].expand_as(z)
        return (z * mask).sum(dim=1) / mask.sum(dim=1)

    def get_c_mean(self, data):
        c, mask = self.get_c(data, return_mask=True)
        mask = mask[:, :, None].expand_as(c)
        return (c * mask).sum(dim=1) / mask.sum(dim=1)

    def get_c_final(self, data):
        c, mask = self.get_c(data, return_mask=True)
        last = (mask.sum(dim=1) - 1)[:, None, None].expand(c.shape[0], 1, c.shape[2]).long()
        return torch.gather(c, dim=1, index=last).squeeze(1)


def embed_fasta(model, loader, pooling_method, output_file):
    model.eval()
    embedder = ProteinEmbedder(model)
    all_embs = []
    for batch in loader:
        if pooling_method == "z_mean":
            emb = embedder.get_z_mean(batch)
        elif pooling_method == "c_mean":
            emb = embedder.get_c_mean(batch)
        elif pooling_method == "c_final":
            emb = embedder.get_c_final(batch)
        else:
            raise NotImplementedError(pooling_method)
        emb = emb.detach().cpu().numpy()
        all_embs.append(emb)

    all_embs = np.concatenate(all_embs, axis=0)
    with open(output_file, "wb") as f:
        pkl.dump(all_embs, f)
    print(f"Embedding file saved to {output_file}.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pooling_method", default="z_mean", choices=["z_mean", "c_mean", "c_final"])
    parser.add_argument("--output_file", default="./embeddings.pkl")
    args = parser.parse_args()
