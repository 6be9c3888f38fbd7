# Source: https://github.com/eora-ai/torchok/commit/f4b090c71039229da7ddf8cd49a5f13106f6d2b6
# Report: torchok commit "Fix problem with memory leak" added torch.cuda.empty_cache() to BaseTask.training_step_end / validation_step_end; later versions of the task drop the calls again
# Shape: the *_step_end hooks run once per batch, so every step synchronizes and hands cached blocks back, and the next step pays cudaMalloc again; nothing live is freed
# Expect: TML009 lines 59, 66
from abc import ABC, abstractmethod
from typing import Dict, Union

import torch
import torch.nn as nn
from pytorch_lightning import LightningModule


class JointLoss(nn.Module):
    """Weighted sum of named losses; returns the total and the per-tag values."""

    def __init__(self, losses: Dict[str, nn.Module], weights: Dict[str, float]):
        super().__init__()
        self.losses = nn.ModuleDict(losses)
        self.weights = weights

    def forward(self, **kwargs):
        tagged = {tag: loss(kwargs['prediction'], kwargs['target']) for tag, loss in self.losses.items()}
        total = sum(self.weights[tag] * value for tag, value in tagged.items())
        return total, tagged


class BaseTask(LightningModule, ABC):
    def __init__(self, hparams, losses: JointLoss):
        super().__init__()
        self.save_hyperparameters(hparams, logger=False)
        self.losses = losses
        self.compute_loss_on_valid = hparams.get('compute_loss_on_valid', True)

    @abstractmethod
    def forward_with_gt(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        pass

    def training_step(self, batch: Dict[str, Union[torch.Tensor, int]], batch_idx: int) -> Dict[str, torch.Tensor]:
        output = self.forward_with_gt(batch)
        total_loss, tagged_loss_values = self.losses(**output)
        output_dict = {'loss': total_loss}
        output_dict.update(tagged_loss_values)
        return output_dict

    def validation_step(self, batch: Dict[str, Union[torch.Tensor, int]], batch_idx: int) -> Dict[str, torch.Tensor]:
        output = self.forward_with_gt(batch)
        if self.compute_loss_on_valid:
            total_loss, tagged_loss_values = self.losses(**output)
            output_dict = {'loss': total_loss}
            output_dict.update(tagged_loss_values)
        else:
            output_dict = {}
        return output_dict

    def training_step_end(self, outputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        output_dict = {tag: value.mean() for tag, value in self.all_gather(outputs, sync_grads=True).items()}
        for tag, value in output_dict.items():
            self.log(f'train/{tag}', value, on_step=False, on_epoch=True)
        torch.cuda.empty_cache()  # expect: TML009
        return output_dict

    def validation_step_end(self, outputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        output_dict = {tag: value.mean() for tag, value in self.all_gather(outputs).items()}
        for tag, value in output_dict.items():
            self.log(f'valid/{tag}', value, on_step=False, on_epoch=True)
        torch.cuda.empty_cache()  # expect: TML009
        return output_dict

    def on_train_epoch_end(self) -> None:
        self.log('step', float(self.current_epoch), on_step=False, on_epoch=True)

    def on_validation_epoch_end(self) -> None:
        self.log('step', float(self.current_epoch), on_step=False, on_epoch=True)


class ClassificationTask(BaseTask):
    def __init__(self, hparams, backbone: nn.Module, head: nn.Module, losses: JointLoss):
        super().__init__(hparams, losses)
        self.backbone = backbone
        self.head = head

    def forward_with_gt(self, batch):
        prediction = self.head(self.backbone(batch['image']))
        return {'prediction': prediction, 'target': batch['target']}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.get('lr', 1e-3))
