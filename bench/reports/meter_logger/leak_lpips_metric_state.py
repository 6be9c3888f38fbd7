# Source: https://github.com/Lightning-AI/torchmetrics/pull/2093
# Report: LPIPS metric update() added the per-batch score tensor straight into its sum_scores state, keeping every batch's compute graph until CUDA OOM; the fix detaches it
# Shape: metric object created before the loop; update() runs the frozen LPIPS net on generator outputs and adds the attached score into a state attribute
# Expect: TML001 line 23
import torch
from torch import nn


class LearnedPerceptualImagePatchSimilarity(nn.Module):
    def __init__(self, net: nn.Module, normalize: bool = False):
        super().__init__()
        self.net = net
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.normalize = normalize
        self.register_buffer("sum_scores", torch.tensor(0.0))
        self.register_buffer("total", torch.tensor(0.0))

    def update(self, img1: torch.Tensor, img2: torch.Tensor) -> None:
        if self.normalize:
            img1, img2 = 2 * img1 - 1, 2 * img2 - 1
        loss = self.net(img1, img2).squeeze()
        self.sum_scores += loss.sum()  # expect: TML001
        self.total += img1.shape[0]

    def compute(self) -> torch.Tensor:
        return self.sum_scores / self.total

    def reset(self) -> None:
        self.sum_scores = torch.zeros_like(self.sum_scores)
        self.total = torch.zeros_like(self.total)


def train_super_resolution(generator, lpips_net, loader, optimizer, epochs, device):
    lpips = LearnedPerceptualImagePatchSimilarity(lpips_net, normalize=True).to(device)
    l1 = nn.L1Loss()
    for epoch in range(epochs):
        generator.train()
        for lr_img, hr_img in loader:
            lr_img, hr_img = lr_img.to(device), hr_img.to(device)
            sr_img = generator(lr_img)
            loss = l1(sr_img, hr_img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            lpips.update(sr_img.clamp(0, 1), hr_img)
        print(f"epoch {epoch}: train LPIPS {lpips.compute().item():.4f}")
        lpips.reset()
