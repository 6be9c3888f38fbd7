# Source: https://github.com/nerfstudio-project/nerfstudio/pull/81
# Report: evaluating NeRF graphs leaked GPU memory because the graph kept an object-based SSIM metric whose state accumulates every test image; the PR switches to the functional SSIM
# Shape: the graph owns self.ssim (a stateful metric object defined below, like torchmetrics' SSIM); log_test_image_outputs() calls it once per test image and its update() appends the full rendered and ground-truth images to list states that are never reset
# Expect: TML004 lines 31, 32
import torch
import torch.nn as nn
import torch.nn.functional as F


def _ssim(preds, target, kernel=11, c1=0.01 ** 2, c2=0.03 ** 2):
    pad = kernel // 2
    mu_x = F.avg_pool2d(preds, kernel, 1, pad)
    mu_y = F.avg_pool2d(target, kernel, 1, pad)
    sxx = F.avg_pool2d(preds * preds, kernel, 1, pad) - mu_x ** 2
    syy = F.avg_pool2d(target * target, kernel, 1, pad) - mu_y ** 2
    sxy = F.avg_pool2d(preds * target, kernel, 1, pad) - mu_x * mu_y
    num = (2 * mu_x * mu_y + c1) * (2 * sxy + c2)
    den = (mu_x ** 2 + mu_y ** 2 + c1) * (sxx + syy + c2)
    return (num / den).mean()


class StructuralSimilarityIndexMeasure(nn.Module):
    """Stateful metric: forward() scores the batch and also adds it to the global state."""

    def __init__(self):
        super().__init__()
        self.preds = []
        self.target = []

    def update(self, preds, target):
        self.preds.append(preds)  # expect: TML004
        self.target.append(target)  # expect: TML004

    def compute(self):
        return _ssim(torch.cat(self.preds), torch.cat(self.target))

    def forward(self, preds, target):
        self.update(preds, target)
        return _ssim(preds, target)


class VanillaNerfGraph(nn.Module):
    def __init__(self, field, writer):
        super().__init__()
        self.field = field
        self.writer = writer
        self.ssim = StructuralSimilarityIndexMeasure()

    @torch.no_grad()
    def get_outputs_for_camera_ray_bundle(self, rays, chunk, height, width):
        chunks = []
        for start in range(0, rays.shape[0], chunk):
            chunks.append(self.field(rays[start:start + chunk]))
        return torch.cat(chunks).view(height, width, -1)

    def log_test_image_outputs(self, image_idx, step, batch, rgb):
        image = batch["image"].to(rgb.device)
        image = image.permute(2, 0, 1).unsqueeze(0)
        rgb = rgb.permute(2, 0, 1).unsqueeze(0)
        psnr = -10.0 * torch.log10(F.mse_loss(rgb, image))
        ssim = self.ssim(image, rgb)
        self.writer.add_scalar(f"psnr/val_{image_idx}", float(psnr), step)
        self.writer.add_scalar(f"ssim/val_{image_idx}", float(ssim), step)
        return psnr.item()


class Trainer:
    def __init__(self, graph):
        self.graph = graph

    def test_image(self, rays, batch, step):
        self.graph.eval()
        h, w = batch["image"].shape[:2]
        rgb = self.graph.get_outputs_for_camera_ray_bundle(rays, 4096, h, w)
        psnr = self.graph.log_test_image_outputs(int(batch["image_idx"]), step, batch, rgb)
        self.graph.train()
        return psnr

    def eval_with_dataloader(self, dataloader, step):
        for rays, batch in dataloader:
            self.test_image(rays.cuda(), batch, step)
