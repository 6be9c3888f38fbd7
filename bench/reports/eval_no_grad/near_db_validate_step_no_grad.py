# Source: https://github.com/MhLiao/DB/issues/320
# Report: "OOM on validation" in Trainer.validate_step(); near-miss is the fix the issue implies: the forward pass of each validation batch runs under torch.no_grad()
# Shape: same validate() -> validate_step() split, but model.forward(batch, training=False) sits inside `with torch.no_grad():`, so no activations are saved; only numpy metrics and images are kept
# Expect: near-miss: must be silent
import os

import torch
from tqdm import tqdm


class DetTrainer:
    def __init__(self, experiment):
        self.experiment = experiment
        self.structure = experiment.structure
        self.logger = experiment.logger
        self.steps = 0

    def validate(self, validation_loaders, model, epoch, step):
        all_metrics = {}
        model.eval()
        for name, loader in validation_loaders.items():
            show = self.experiment.validation.visualize
            metrics, vis_images = self.validate_step(loader, model, show)
            if show:
                self.logger.images(os.path.join("vis", name), vis_images, step)
            for key, metric in metrics.items():
                full_key = name + "/" + key
                if full_key in all_metrics:
                    all_metrics[full_key].update(metric.val, metric.count)
                else:
                    all_metrics[full_key] = metric
        for key, metric in all_metrics.items():
            self.logger.info("%s : %f (%d)" % (key, metric.avg, metric.count))
        self.logger.metrics(epoch, self.steps, all_metrics)
        model.train()
        return all_metrics

    def validate_step(self, data_loader, model, visualize=False):
        raw_metrics = []
        vis_images = dict()
        for i, batch in tqdm(enumerate(data_loader), total=len(data_loader)):
            with torch.no_grad():
                pred = model.forward(batch, training=False)
            output = self.structure.representer.represent(batch, pred)
            raw_metric = self.structure.measurer.validate_measure(
                batch, output, is_output_polygon=True, box_thresh=0.1)
            raw_metrics.append(raw_metric)
            if visualize and self.structure.visualizer:
                vis_images.update(self.structure.visualizer.visualize(batch, output, pred))
        metrics = self.structure.measurer.gather_measure(raw_metrics, self.logger)
        return metrics, vis_images

    def train_step(self, model, optimizer, batch):
        optimizer.zero_grad()
        loss, pred = model.forward(batch, training=True)
        loss = loss.mean()
        loss.backward()
        optimizer.step()
        return loss.item()
