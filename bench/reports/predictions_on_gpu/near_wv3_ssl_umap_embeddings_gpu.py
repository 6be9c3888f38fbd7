# Source: https://github.com/kaushikCanada/landcover-ssl/blob/2aa80f9f63745b43775e5d22a90127b0af77e971/app/src/train/selfsupervised/embedding_plot.py
# Report: audit of the embedding-plot step of a WorldView-3 land-cover self-supervised project: under no_grad the Barlow Twins backbone embeds every test tile and each batch's embedding was appended to a list while still on the GPU, concatenated and moved to the CPU only after the loop
# Shape: same script, but embed_tiles is decorated with @torch.inference_mode() and each batch's embedding is copied to host memory with .to("cpu", non_blocking=True) before it is kept; the list is concatenated on the CPU
# Expect: near-miss: must be silent
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


@torch.inference_mode()
def embed_tiles(model, dataloader_test, device):
    embeddings = []
    n_tiles = 0
    for batch in dataloader_test:
        x = batch["image"].to(device, non_blocking=True)
        y = model.backbone(x).flatten(start_dim=1)
        embeddings.append(y.to("cpu", non_blocking=True))
        n_tiles += x.size(0)
    if device.type == "cuda":
        torch.cuda.synchronize()  # the non_blocking copies must land before numpy reads them
    embeddings = torch.cat(embeddings, dim=0)
    return embeddings.numpy(), n_tiles


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
