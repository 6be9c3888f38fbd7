# Source: https://github.com/IntelLabs/MART/pull/271
# Report: MART changed LitModular's training/validation/test_step to return the full output dict so callbacks can visualize intermediate tensors in on_train_batch_end; the author asked whether everything but the loss should be detached "to avoid memory leaks", since Lightning hands the step's (graph-attached) output to every callback.
# Shape: same step returning the undetached dict (as in the PR), but the callback keeps only a detached CPU copy of 8 images per logged batch: the list still grows, but it holds no graph and no GPU memory.
# Expect: near-miss: must be silent
import os

import torch
from pytorch_lightning import Callback, LightningModule
from torchvision.utils import make_grid, save_image


class LitModular(LightningModule):
    def __init__(self, model, optimizer, training_step_log=None):
        super().__init__()
        self.model = model
        self.optimizer = optimizer
        self.training_step_log = training_step_log or ["loss"]

    def configure_optimizers(self):
        return self.optimizer(self.model)

    def forward(self, **kwargs):
        return self.model(**kwargs)

    def training_step(self, batch, batch_idx):
        input, target = batch
        output = self(input=input, target=target, step="training")
        for name in self.training_step_log:
            self.log(f"training/{name}", output[name])
        # Return the whole dict so that callbacks can look at preds/input.
        return output


class PerturbedImageVisualizer(Callback):
    """Save a grid of adversarial predictions at the end of training."""

    def __init__(self, folder, frequency: int = 100):
        super().__init__()
        self.folder = folder
        self.frequency = frequency
        self.history = []
        os.makedirs(self.folder, exist_ok=True)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if batch_idx % self.frequency != 0:
            return
        preds = outputs["preds"]
        self.history.append(preds[:8].detach().cpu())

    def on_train_end(self, trainer, pl_module):
        if not self.history:
            return
        images = torch.cat(self.history)
        grid = make_grid(images / 255, nrow=8)
        save_image(grid, os.path.join(self.folder, "perturbed.png"))
