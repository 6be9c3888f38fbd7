# Source: https://github.com/nttcslab/dcase2025_task4_baseline/blob/f67d2b28c84100b31574f11ee580980a18567fb2/src/training/lightningmodule/base_lightningmodule.py
# Report: audit of the DCASE 2025 task 4 baseline LightningModule: training_step_processing returns a dict of live loss terms, and training_step turns every entry into val.item() before self.log_dict; validation_step is bound to _validation_step in __init__ (Lightning runs it under no_grad) and its helper already returns .item()'ed values; correct as written
# Shape: an audio source-separation module whose helpers return (batchsize, loss_dict); dict comprehensions take .item() of every value before logging; only loss_dict["loss"] travels back to Lightning
# Expect: near-miss: must be silent
import lightning.pytorch as pl
import torch


class LabelQuerySeparation(pl.LightningModule):
    def __init__(self, model, loss_func, lr=1e-4, metric_func=None, is_validation=True):
        super().__init__()
        self.model = model
        self.loss_func = loss_func
        self.metric_func = metric_func
        self.lr = lr
        if is_validation:
            self.validation_step = self._validation_step

    def _forward(self, batch):
        input_dict = {"mixture": batch["mixture"], "label_vector": batch["label_vector"]}
        output_dict = self.model(input_dict)
        target_dict = {"waveform": batch["ground_truth"]}
        return output_dict, target_dict

    def training_step_processing(self, batch, batch_idx):
        output_dict, target_dict = self._forward(batch)
        return batch["mixture"].shape[0], self.loss_func(output_dict, target_dict)

    def training_step(self, batch, batch_idx):
        self.model.train()
        batchsize, loss_dict = self.training_step_processing(batch, batch_idx)
        loss = loss_dict["loss"]
        step_dict = {f"step_train/{name}": val.item() for name, val in loss_dict.items()}
        self.log_dict(step_dict, on_step=True, on_epoch=False, batch_size=batchsize)
        epoch_dict = {f"epoch_train/{name}": val.item() for name, val in loss_dict.items()}
        self.log_dict(epoch_dict, prog_bar=True, on_step=False, on_epoch=True, batch_size=batchsize)
        return loss

    def validation_step_processing(self, batch, batch_idx):
        output_dict, target_dict = self._forward(batch)
        loss_dict = {k: v.item() for k, v in self.loss_func(output_dict, target_dict).items()}
        if self.metric_func is not None:
            for k, v in self.metric_func(output_dict, target_dict).items():
                loss_dict[k] = v.mean().item()
        return batch["mixture"].shape[0], loss_dict

    def _validation_step(self, batch, batch_idx):
        self.model.eval()
        batchsize, loss_dict = self.validation_step_processing(batch, batch_idx)
        self.log_dict({f"epoch_val/{k}": v for k, v in loss_dict.items()}, on_epoch=True, batch_size=batchsize)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.lr, amsgrad=True)
