# Source: https://github.com/p4arth/tiny-diffusers/blob/16fa0aca3ee5ecb7f6e5ae9ff93a962d64442781/src/train.py
# Report: tiny MLP diffusion model on MNIST: the epoch loop writes each batch loss into a preallocated per-epoch tensor as loss.item(); the sampler in utils/utils.py runs under torch.no_grad()
# Shape: losses[idx] = loss.item() copies a Python float into the buffer (no graph); x0 = model(x0, step) + eta in sample() is loop-carried but computed under no_grad
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn
from torch.optim import Adam
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Diffuser(nn.Module):
    def __init__(self, beta, side=28, max_t=2000, device="cpu"):
        super().__init__()
        self.alpha = 1 - beta
        self.feats = side * side
        self.embedding = nn.Embedding(max_t, self.feats)
        self.lin = nn.Sequential(nn.Linear(self.feats, 1024), nn.SiLU(), nn.Linear(1024, 1024), nn.SiLU(),
                                 nn.Linear(1024, self.feats))
        self.device = device

    def forward(self, x, t=None, sampling=False):
        if sampling:
            return self.lin(x)
        bs, c, h, w = x.shape
        eps = torch.normal(0, 1, x.shape).to(self.device)
        alpha_t = self.alpha ** t
        x_noisy = (alpha_t ** 0.5) * x + ((1 - alpha_t) ** 0.5) * eps
        t_emb = self.embedding(torch.LongTensor([int(t)]).to(self.device))
        e_theta = self.lin(x_noisy.view(bs, c, h * w) + t_emb)
        return eps, e_theta.view(bs, c, h, w)


def sample(model, sigma=1, steps=1999, side=28):
    x0 = torch.rand(1, 1, side * side, device=DEVICE)
    model.eval()
    with torch.no_grad():
        for step in reversed(range(steps)):
            eta = torch.randn_like(x0) * sigma * (step / steps) ** 0.5
            x0 = model(x0, step, sampling=True) + eta
    return x0.view(side, side).cpu()


def train(data, model, criterion, optimizer, denoise_steps, epochs, starting_epoch):
    model.train()
    min_loss = float("inf")
    for epoch in range(int(starting_epoch) + 1, epochs):
        losses = torch.zeros(len(data)).to(DEVICE)
        for idx, (x0, _) in enumerate(data):
            x0 = x0.to(DEVICE)
            optimizer.zero_grad()
            t = np.random.uniform(0, denoise_steps)
            e, e_theta = model(x0, t)
            loss = criterion(e, e_theta)
            loss.backward()
            optimizer.step()
            losses[idx] = loss.item()
        mean_loss = torch.mean(losses).item()
        print(f"Epoch {epoch}: average loss {mean_loss:.4f}")
        if min_loss > mean_loss:
            min_loss = mean_loss
            torch.save({"model": model.state_dict(), "epoch": epoch}, "pretrained/best_loss.pth")


if __name__ == "__main__":
    loader = DataLoader(MNIST(root=".", download=True, transform=ToTensor()), batch_size=256)
    net = Diffuser(beta=0.001, max_t=2000, device=DEVICE).to(DEVICE)
    train(loader, net, nn.MSELoss(), Adam(net.parameters(), lr=2e-4), 2000, 5000, 0)
    sample(net)
