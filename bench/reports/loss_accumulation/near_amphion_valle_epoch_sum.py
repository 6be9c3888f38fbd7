# Source: https://github.com/open-mmlab/Amphion/issues/263
# Report: VALL-E v2 training: host memory rose every epoch until restart; maintainer traced it to `epoch_sum_loss += loss` in base_trainer and fixed it with `.item()`
# Shape: same trainer after the fix: the helper-returned loss is reduced with `.item()` before it is summed into the epoch accumulator
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm


class ValleBaseTrainer:
    def __init__(self, cfg, model, optimizer, accelerator, train_dataloader, valid_dataloader, logger):
        self.cfg = cfg
        self.model = model
        self.optimizer = optimizer
        self.accelerator = accelerator
        self.train_dataloader = train_dataloader
        self.valid_dataloader = valid_dataloader
        self.logger = logger
        self.epoch = 0
        self.step = 0
        self.current_loss = 0.0

    def _forward_step(self, batch):
        out = self.model(**batch)
        return out.loss

    def _train_step(self, batch):
        return self._forward_step(batch)

    @torch.inference_mode()
    def _valid_step(self, batch):
        return self._forward_step(batch)

    def _train_epoch(self):
        self.model.train()
        epoch_sum_loss: float = 0.0
        ema_loss = None
        for batch in tqdm(self.train_dataloader, desc=f"Training Epoch {self.epoch}", leave=False):
            with self.accelerator.accumulate(self.model):
                loss = self._train_step(batch)
                self.current_loss = loss.item()
                ema_loss = (
                    0.99 * ema_loss + 0.01 * self.current_loss
                    if ema_loss is not None
                    else self.current_loss
                )
                self.accelerator.backward(loss)
                if self.accelerator.sync_gradients:
                    self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()

            if self.accelerator.sync_gradients:
                if self.accelerator.is_main_process and self.step % 100 == 0:
                    self.logger.info(f"EMA Loss: {ema_loss:.6f}")
                self.accelerator.log(
                    {"Step/Train Loss": self.current_loss, "Step/Learning Rate": self.optimizer.param_groups[0]["lr"]},
                    step=self.step,
                )
                epoch_sum_loss += loss.item()
                self.step += 1

        return epoch_sum_loss / len(self.train_dataloader) * self.cfg.train.gradient_accumulation_step

    @torch.inference_mode()
    def _valid_epoch(self):
        self.model.eval()
        epoch_sum_loss = 0.0
        for batch in tqdm(self.valid_dataloader, desc=f"Validating Epoch {self.epoch}", leave=False):
            batch_loss = self._valid_step(batch)
            epoch_sum_loss += batch_loss.item()
        return epoch_sum_loss / len(self.valid_dataloader)
