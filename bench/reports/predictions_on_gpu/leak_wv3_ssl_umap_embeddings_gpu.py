# Source: https://github.com/kaushikCanada/landcover-ssl/blob/2aa80f9f63745b43775e5d22a90127b0af77e971/app/src/train/selfsupervised/embedding_plot.py
# Report: audit of the embedding-plot step of a WorldView-3 land-cover self-supervised project: under no_grad the pre-trained Barlow Twins backbone embeds every test tile and each batch's flattened embedding is appended to a list while still on the GPU; only after the loop is the list concatenated and moved to the CPU for UMAP
# Shape: load the BarlowTwinsTask checkpoint, build the unlabelled WV3 tile loader, loop under torch.no_grad() appending model.backbone(x).flatten(1) per batch, torch.cat + .cpu().numpy(), UMAP fit and a scatter plot saved to disk
# Expect: TML004 line 29
import argparse

import matplotlib.pyplot as plt
import torch
import umap
from torch.utils.data import DataLoader

from data_utils.statistics import WORLDVIEW3_NORMALIZE
from data_utils.wv3_unlabelled_dataset import Worldview3UnlabelledDataset
from train_utils.barlowtwinstrainer import BarlowTwinsTask


def load_backbone(ckpt_path, device):
    task = BarlowTwinsTask.load_from_checkpoint(ckpt_path, map_location="cpu")
    return task.to(device).eval()


def embed_tiles(model, dataloader_test, device):
    embeddings = []
    n_tiles = 0
    with torch.no_grad():
        for batch in dataloader_test:
            x = batch["image"].to(device)
            y = model.backbone(x).flatten(start_dim=1)
            embeddings.append(y)  # expect: TML004
            n_tiles += x.size(0)
    embeddings = torch.cat(embeddings, dim=0)
    return embeddings.cpu().numpy(), n_tiles


def plot_umap(embeddings, out_png):
    reducer = umap.UMAP()
    umap_embeddings = reducer.fit_transform(embeddings)
    plt.figure(figsize=(10, 8))
    plt.scatter(umap_embeddings[:, 0], umap_embeddings[:, 1], s=5, cmap="Spectral")
    plt.title("UMAP projection of the embeddings")
    plt.savefig(out_png, dpi=150)
    plt.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--tiles", required=True)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--out", default="umap_embeddings.png")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = Worldview3UnlabelledDataset(root=args.tiles, transforms=WORLDVIEW3_NORMALIZE)
    dataloader_test = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=8)
    model = load_backbone(args.ckpt, device)
    embeddings, n_tiles = embed_tiles(model, dataloader_test, device)
    print(f"embedded {n_tiles} tiles -> {embeddings.shape}")
    plot_umap(embeddings, args.out)


if __name__ == "__main__":
    main()
