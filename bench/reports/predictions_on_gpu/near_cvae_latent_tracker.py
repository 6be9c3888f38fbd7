# Source: https://github.com/timbmg/VAE-CVAE-MNIST/blob/4f1b22367a5c5cff88bf97ce78219132aa9fd977/train.py
# Report: audit of the (C)VAE MNIST trainer: a per-epoch nested defaultdict records every training sample's 2-D latent code for a scatter plot, taking z[i, 0].item() so only Python floats are kept (correct)
# Shape: as the repository does it: the growing tracker dict is filled with .item() floats, the loss log with .item(), and the preview sampler output is detached and copied to the CPU
# Expect: near-miss: must be silent
from collections import defaultdict

import matplotlib.pyplot as plt
import pandas as pd
import torch
import torch.nn.functional as F


def loss_fn(recon_x, x, mean, log_var):
    bce = F.binary_cross_entropy(recon_x.view(-1, 784), x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + log_var - mean.pow(2) - log_var.exp())
    return (bce + kld) / x.size(0)


def save_preview(vae, args, device, path):
    if args.conditional:
        c = torch.arange(0, 10).long().unsqueeze(1).to(device)
        x = vae.inference(torch.randn(c.size(0), args.latent_size, device=device), c=c)
    else:
        x = vae.inference(torch.randn(10, args.latent_size, device=device))
    fig = plt.figure(figsize=(5, 10))
    for p in range(10):
        plt.subplot(5, 2, p + 1)
        plt.imshow(x[p].view(28, 28).detach().cpu().numpy())
        plt.axis("off")
    fig.savefig(path, dpi=150)
    plt.close("all")


def train(vae, data_loader, args, device="cuda"):
    optimizer = torch.optim.Adam(vae.parameters(), lr=args.learning_rate)
    logs = defaultdict(list)
    for epoch in range(args.epochs):
        tracker_epoch = defaultdict(lambda: defaultdict(dict))
        for iteration, (x, y) in enumerate(data_loader):
            x, y = x.to(device), y.to(device)
            if args.conditional:
                recon_x, mean, log_var, z = vae(x, y)
            else:
                recon_x, mean, log_var, z = vae(x)

            for i, yi in enumerate(y):
                idx = len(tracker_epoch)
                tracker_epoch[idx]["x"] = z[i, 0].item()
                tracker_epoch[idx]["y"] = z[i, 1].item()
                tracker_epoch[idx]["label"] = yi.item()

            loss = loss_fn(recon_x, x, mean, log_var)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            logs["loss"].append(loss.item())

            if iteration % args.print_every == 0 or iteration == len(data_loader) - 1:
                print(f"Epoch {epoch:02d} Batch {iteration:04d}, Loss {loss.item():9.4f}")
                save_preview(vae, args, device, f"{args.fig_root}/E{epoch}I{iteration}.png")

        df = pd.DataFrame.from_dict(tracker_epoch, orient="index")
        df.groupby("label").head(100).plot.scatter(x="x", y="y", c="label", cmap="tab10")
        plt.savefig(f"{args.fig_root}/E{epoch}-Dist.png", dpi=150)
        plt.close("all")
    return logs
