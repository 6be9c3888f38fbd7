# Source: https://github.com/meteofrance/py4cast/issues/7
# Report: GPU memory drifted per test batch until OOM because the plotters kept each batch's error tensors on the GPU; the fix moved them to the CPU with .cpu() before accumulating
# Shape: fixed version: each observer's update() still appends the per-batch error tensor to a list attribute, but only after .cpu(), so no device memory is kept across test batches
# Expect: near-miss: must be silent
import einops
import matplotlib.pyplot as plt
import pytorch_lightning as pl
import torch


class ErrorObserver:
    def update(self, obj, prediction, target):
        raise NotImplementedError

    def on_step_end(self, obj, label=""):
        raise NotImplementedError


class StateErrorPlot(ErrorObserver):
    def __init__(self, metrics, prefix="Test"):
        self.metrics = metrics
        self.prefix = prefix
        self.losses = {name: [] for name in metrics}

    def update(self, obj, prediction, target):
        for name in self.metrics:
            self.losses[name].append(self.metrics[name](prediction, target).cpu())

    def on_step_end(self, obj, label=""):
        tensorboard = obj.logger.experiment
        for name in self.metrics:
            loss = torch.cat(self.losses[name], dim=0).mean(dim=0)
            for t in range(loss.shape[0]):
                for k in range(loss.shape[1]):
                    tensorboard.add_scalar(f"{label}_{name}/timestep_{k}", loss[t][k], t + 1)
        for name in self.metrics:
            self.losses[name].clear()


class SpatialErrorPlot(ErrorObserver):
    """Map of where the error accumulates, averaged over the test set."""

    def __init__(self, prefix="Test"):
        self.spatial_loss_maps = []
        self.prefix = prefix

    def update(self, obj, prediction, target):
        spatial_loss = obj.loss(prediction, target, reduce_spatial_dim=False).cpu()
        if obj.num_spatial_dims == 1:
            spatial_loss = einops.rearrange(
                spatial_loss, "b t (x y) -> b t x y", x=obj.grid_shape[0]
            )
        self.spatial_loss_maps.append(spatial_loss)

    def on_step_end(self, obj, label=""):
        mean_map = torch.cat(self.spatial_loss_maps, dim=0).mean(dim=0)
        for t_i, loss_map in enumerate(mean_map):
            fig, ax = plt.subplots()
            ax.imshow(loss_map.cpu().numpy())
            obj.logger.experiment.add_figure(f"spatial_error_{label}/{self.prefix}", fig, t_i)
            plt.close(fig)
        self.spatial_loss_maps.clear()


class AutoRegressiveLightning(pl.LightningModule):
    def on_test_start(self):
        self.test_plotters = [StateErrorPlot(self.metrics), SpatialErrorPlot()]

    def test_step(self, batch, batch_idx):
        prediction, target, _ = self._shared_val_test_step(batch, batch_idx, "test")
        for plotter in self.test_plotters:
            plotter.update(self, prediction=prediction, target=target)

    def on_test_epoch_end(self):
        for plotter in self.test_plotters:
            plotter.on_step_end(self, label="Test")
