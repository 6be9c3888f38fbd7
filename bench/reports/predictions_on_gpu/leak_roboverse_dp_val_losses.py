# Source: https://github.com/RoboVerseOrg/RoboVerse/blob/1e1c8ea6798beb1db1620ab0deae6252ea35b115/roboverse_learn/il/dp/runner/dp_runner.py
# Report: audited code: DPRunner.train() validation block appends each CUDA loss tensor (`val_losses.append(loss)`) under torch.no_grad() and only reduces them with torch.tensor(val_losses) after the loop
# Shape: same DPRunner epoch loop (grad accumulation, EMA step, .item() for train losses); the validation list keeps one device tensor per val batch until the epoch ends
# Expect: TML004 line 56
import copy

import numpy as np
import torch
import tqdm


class DPRunner:
    def __init__(self, cfg, model, optimizer, lr_scheduler, ema=None):
        self.cfg = cfg
        self.model = model
        self.ema_model = copy.deepcopy(model) if ema is not None else None
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.ema = ema
        self.global_step = 0
        self.epoch = 0

    def train(self, dataset, train_dataloader, val_dataloader, json_logger, wandb_run=None):
        params = self.cfg.train_config.training_params
        device = torch.device(params.device)
        self.model.to(device)
        for _ in range(params.num_epochs):
            step_log = dict()
            train_losses = list()
            with tqdm.tqdm(train_dataloader, desc=f"Training epoch {self.epoch}") as tepoch:
                for batch_idx, batch in enumerate(tepoch):
                    batch = dataset.postprocess(batch, device)
                    raw_loss = self.model.compute_loss(batch)
                    loss = raw_loss / params.gradient_accumulate_every
                    loss.backward()
                    if self.global_step % params.gradient_accumulate_every == 0:
                        self.optimizer.step()
                        self.optimizer.zero_grad()
                        self.lr_scheduler.step()
                    if self.ema is not None:
                        self.ema.step(self.model)
                    raw_loss_cpu = raw_loss.item()
                    tepoch.set_postfix(loss=raw_loss_cpu, refresh=False)
                    train_losses.append(raw_loss_cpu)
                    self.global_step += 1
            step_log["train_loss"] = np.mean(train_losses)

            policy = self.ema_model if self.ema is not None else self.model
            policy.eval()
            if self.epoch % params.val_every == 0:
                with torch.no_grad():
                    val_losses = list()
                    for batch_idx, batch in enumerate(val_dataloader):
                        batch = dataset.postprocess(batch, device)
                        loss = self.model.compute_loss(batch)
                        val_losses.append(loss)  # expect: TML004
                        if params.max_val_steps is not None and batch_idx >= params.max_val_steps - 1:
                            break
                    if len(val_losses) > 0:
                        step_log["val_loss"] = torch.mean(torch.tensor(val_losses)).item()
            policy.train()

            json_logger.log(step_log)
            if wandb_run is not None:
                wandb_run.log(step_log, step=self.global_step)
            self.epoch += 1
