# Source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/issues/2220
# Report: the PyTorch adversarial-patch attack called loss.backward(retain_graph=True) in every patch-optimisation step, keeping each step's graph and driving RAM to 40 GB for 6 frames; the requested fix is retain_graph=False
# Shape: fixed version: the single backward per step no longer retains the graph and _train_step hands back a detached loss; the patch is a leaf updated in place under no_grad
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class PatchAttack:
    def __init__(self, estimator, patch_shape, learning_rate=5.0, max_iter=500, batch_size=16, targeted=True):
        self.estimator = estimator
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.targeted = targeted
        lo, hi = estimator.clip_values
        init = np.full(patch_shape, (hi - lo) / 2.0 + lo, dtype=np.float32)
        self._patch = torch.tensor(init, requires_grad=True, device=estimator.device)
        self._optimizer = torch.optim.Adam([self._patch], lr=learning_rate)

    def _overlay(self, images, mask):
        h, w = images.shape[-2:]
        padded = F.interpolate(self._patch[None], size=(h, w), mode="bilinear", align_corners=False)
        return images * (1 - mask) + padded * mask

    def _loss(self, images, target, mask):
        patched = torch.clamp(self._overlay(images, mask), *self.estimator.clip_values)
        logits = self.estimator.model(patched)
        loss = F.cross_entropy(logits, target.argmax(dim=1))
        return loss if self.targeted else -loss

    def _train_step(self, images, target, mask):
        self._optimizer.zero_grad()
        loss = self._loss(images, target, mask)
        loss.backward()
        self._optimizer.step()
        with torch.no_grad():
            self._patch[:] = torch.clamp(self._patch, *self.estimator.clip_values)
        return loss.detach()

    def generate(self, x, y, mask):
        device = self.estimator.device
        loader = DataLoader(TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=self.batch_size, shuffle=True)
        mask_t = torch.tensor(mask, device=device)
        last_loss = None
        for _ in range(self.max_iter):
            for images, target in loader:
                last_loss = self._train_step(images.to(device), target.to(device), mask_t)
        print(f"final patch loss: {last_loss}")
        return self._patch.detach().cpu().numpy()
