# Source: https://github.com/twosixlabs/armory/issues/1958
# Report: armory's CARLA adversarial-patch attack (from ART's AdversarialPatchPyTorch) calls loss.backward(retain_graph=True) every attack iteration; memory grows with max_iter and batch frames, fixed by retain_graph=False
# Shape: inner_generate loops max_iter times over _train_step, whose backward retains the graph and whose returned loss is kept in `_` until the next step
# Expect: TML006 line 28
import numpy as np
import torch
from tqdm import trange


class CARLAAdversarialPatchPyTorch:
    def __init__(self, estimator, patch_shape, learning_rate: float = 5.0 / 255, max_iter: int = 500):
        self.estimator = estimator
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self._patch = torch.rand(patch_shape, requires_grad=True, device=estimator.device)

    def _loss(self, images, target, mask):
        patched = self._random_overlay(images, self._patch, mask=mask)
        loss_components, _ = self.estimator.compute_losses(x=patched, y=target)
        return sum(loss_components.values())

    def _random_overlay(self, images, patch, mask=None):
        return images * 0.5 + patch.mean() * 0.5

    def _train_step(self, images, target, mask=None) -> torch.Tensor:
        self.estimator.model.zero_grad()
        loss = self._loss(images, target, mask)
        loss.backward(retain_graph=True)  # expect: TML006

        gradients = self._patch.grad.sign() * self.learning_rate
        with torch.no_grad():
            self._patch[:] = torch.clamp(self._patch + gradients,
                                         min=self.estimator.clip_values[0], max=self.estimator.clip_values[1])
        self._patch.grad = None
        return loss

    def inner_generate(self, x: np.ndarray, y=None):
        for i_iter in trange(self.max_iter, desc="Adversarial Patch PyTorch"):
            images = torch.from_numpy(x).to(self.estimator.device)
            _ = self._train_step(images=images, target=y, mask=None)
        return self._patch.detach().cpu().numpy()
