# Source: https://github.com/MhLiao/DB/issues/320
# Report: "OOM on validation": training fits batch 24 but validation runs out of GPU memory; Trainer.validate() calls model.eval() and then validate_step() runs every validation batch through model.forward with autograd on
# Shape: validate() switches to eval and delegates to validate_step(), whose loop over the validation loader calls model.forward(batch, training=False) with no grad-disabled context, so every batch saves the detector's activations for a backward that never comes (the measurer only keeps numpy metrics)
# Expect: TML003 line 42
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
            pred = model.forward(batch, training=False)  # expect: TML003
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
