# Source: https://github.com/awslabs/sockeye/blob/0aef0769bda2cb4db53af0ed1ac31d65a499df02/sockeye/training_pt.py
# Report: audited sockeye training_pt.py PyTorchEarlyStoppingTrainer._evaluate as published: forward and loss run inside `with torch.inference_mode():`
# Shape: same eval() loop over the validation iterator, forward and loss inside inference_mode, metrics updated with .item() outside the block
# Expect: near-miss: must be silent

import logging
import os
from typing import List, Optional

import torch

from . import constants as C
from . import loss_pt

logger = logging.getLogger(__name__)


class PyTorchEarlyStoppingTrainer:

    def __init__(self, config, sockeye_model, loss_functions: List, device: torch.device) -> None:
        self.config = config
        self.sockeye_model = sockeye_model
        self.loss_functions = loss_functions
        self.device = device
        self.state = None

    def _evaluate(self, checkpoint: int, data_iter,
                  checkpoint_decoder: Optional[object]) -> List[loss_pt.LossMetric]:
        """
        Computes loss(es) on validation data and returns their metrics.
        """
        self.sockeye_model.eval()

        data_iter.reset()
        val_metrics = [lf.create_metric() for lf in self.loss_functions]
        for batch in data_iter:
            batch = batch.load(device=self.device)
            with torch.inference_mode():
                outputs = self.sockeye_model(batch.source, batch.source_length, batch.target, batch.target_length)
                loss_outputs = [loss_function(outputs, batch.labels) for loss_function in self.loss_functions]
            for loss_metric, (loss_value, num_samples) in zip(val_metrics, loss_outputs):
                loss_metric.update(loss_value.item(), num_samples.item())

        if checkpoint_decoder is not None:
            output_name = os.path.join(self.config.output_dir, C.DECODE_OUT_NAME.format(checkpoint=checkpoint))
            decoder_metrics = checkpoint_decoder.decode_and_evaluate(output_name=output_name)
            for metric_name, metric_value in decoder_metrics.items():
                assert metric_name not in val_metrics, "Duplicate validation metric %s" % metric_name
                metric = loss_pt.LossMetric(name=metric_name)
                metric.update(metric_value, num_samples=1)
                val_metrics.append(metric)

        logger.info('Checkpoint [%d]\t%s',
                    self.state.checkpoint, "\t".join("Validation-%s" % str(lm) for lm in val_metrics))

        self.sockeye_model.train()
        return val_metrics

    def _create_checkpoint(self, checkpoint_decoder, validation_iter):
        self.state.checkpoint += 1
        train_metrics = [lf.metric for lf in self.loss_functions]
        val_metrics = self._evaluate(self.state.checkpoint, validation_iter, checkpoint_decoder)
        for metric in train_metrics:
            metric.reset()
        return val_metrics
