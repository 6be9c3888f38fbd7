# Source: https://github.com/kornia/kornia/blob/f7b3ffb8b9ca88062e26bb32bbd72990a88ddc9b/kornia/nerf/nerf_solver.py
# Report: audited bug in kornia.nerf NerfSolver._train_one_epoch (present since the NeRF PR #1869 and still at this commit): the epoch PSNR is summed as a tensor from psnr(rgbs_model, rgbs) while grad is enabled; this near-miss is the corrected variant
# Shape: the same tensor accumulator on the device, but the metric is computed and added inside torch.no_grad(), so total_psnr never records a graph; float() after the loop as before
# Expect: near-miss: must be silent
from datetime import datetime
from typing import Optional

import torch
import torch.nn.functional as F
import torch.optim as optim
from torch import Tensor, nn


def psnr(image: Tensor, target: Tensor, max_val: float) -> Tensor:
    """Peak signal-to-noise ratio, as in kornia.metrics.psnr."""
    return 10.0 * torch.log10(max_val ** 2 / F.mse_loss(image, target, reduction='mean'))


class NerfModel(nn.Module):
    def __init__(self, num_ray_points: int, hidden: int = 128):
        super().__init__()
        self.num_ray_points = num_ray_points
        self.mlp = nn.Sequential(nn.Linear(6, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, origins: Tensor, directions: Tensor) -> Tensor:
        t = torch.linspace(0.0, 1.0, self.num_ray_points, device=origins.device)
        pts = origins[:, None] + directions[:, None] * t[None, :, None]
        out = self.mlp(torch.cat([pts, directions[:, None].expand_as(pts)], -1))
        weights = torch.softmax(out[..., 3], dim=-1)
        return (weights[..., None] * torch.sigmoid(out[..., :3])).sum(1)


class NerfSolver:
    def __init__(self, device, dtype: torch.dtype) -> None:
        self._nerf_model: Optional[NerfModel] = None
        self._nerf_optimizer: Optional[optim.Optimizer] = None
        self._ray_data_loader = None
        self._device = device
        self._dtype = dtype

    def init_training(self, ray_data_loader, num_ray_points: int, lr: float = 1.0e-3) -> None:
        self._ray_data_loader = ray_data_loader
        self._nerf_model = NerfModel(num_ray_points).to(self._device)
        self._nerf_optimizer = optim.Adam(self._nerf_model.parameters(), lr=lr)

    def _train_one_epoch(self) -> float:
        nerf_model = self._nerf_model
        nerf_optimizer = self._nerf_optimizer

        total_psnr: Tensor = torch.tensor(0.0, device=self._device, dtype=self._dtype)
        i_batch: float = 0

        for origins, directions, rgbs in self._ray_data_loader:
            origins = origins.to(self._device)
            directions = directions.to(self._device)
            rgbs = rgbs.to(self._device)
            rgbs_model = nerf_model(origins, directions)
            loss = F.mse_loss(rgbs_model, rgbs)

            with torch.no_grad():
                total_psnr += psnr(rgbs_model, rgbs, 1.0)

            nerf_optimizer.zero_grad()
            loss.backward()
            nerf_optimizer.step()

            i_batch += 1

        return float(total_psnr / (i_batch + 1))

    def run(self, num_epochs: int = 1) -> None:
        for i_epoch in range(num_epochs):
            epoch_psnr: float = self._train_one_epoch()
            if i_epoch % 10 == 0:
                current_time = datetime.now().strftime("%H:%M:%S")
                print(f"Epoch: {i_epoch}: epoch_psnr = {epoch_psnr}; time: {current_time}")
