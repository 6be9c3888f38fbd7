# Source: https://github.com/nttcslab/dcase2025_task4_baseline/blob/f67d2b28c84100b31574f11ee580980a18567fb2/src/training/lightningmodule/base_lightningmodule.py
# Report: audit of the DCASE 2025 task 4 baseline LightningModule whose training_step_processing returns a dict of live loss terms; the repo .item()s every entry before logging, this is the variant it avoided, keeping its own per-epoch running sums of the raw dict values on self for an epoch-end summary, so every step's graph-attached terms chain until on_train_epoch_end
# Shape: same module and helpers; training_step adds each raw loss_dict value into self._epoch_sums (a dict on self), on_train_epoch_end logs the averages and resets it
# Expect: TML001 line 37
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
        self._epoch_sums, self._epoch_steps = {}, 0

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
        for name, val in loss_dict.items():
            self._epoch_sums[name] = self._epoch_sums.get(name, 0.0) + val  # expect: TML001
        self._epoch_steps += 1
        return loss

    def on_train_epoch_end(self):
        means = {f"epoch_train/{k}": float(v) / self._epoch_steps for k, v in self._epoch_sums.items()}
        self.log_dict(means, prog_bar=True)
        self._epoch_sums, self._epoch_steps = {}, 0

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
