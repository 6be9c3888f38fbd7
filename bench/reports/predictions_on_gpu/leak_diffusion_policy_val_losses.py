# Source: https://github.com/real-stanford/diffusion_policy/blob/main/diffusion_policy/workspace/train_diffusion_unet_lowdim_workspace.py
# Report: Diffusion Policy's workspace keeps train losses as floats but appends each validation batch's loss tensor as is (inside no_grad) and only converts once at the end
# Shape: val_losses (created before the val loop) collects CUDA scalars from self.model.compute_loss(batch) under torch.no_grad(); EMA update is a @torch.no_grad() method reading param.data
# Expect: TML004 line 76
import numpy as np
import torch


def dict_apply(d, fn):
    return {k: dict_apply(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


class EMAModel:
    def __init__(self, model, power=2 / 3, max_value=0.9999):
        self.averaged_model = model
        self.averaged_model.eval()
        self.averaged_model.requires_grad_(False)
        self.power, self.max_value = power, max_value
        self.decay, self.optimization_step = 0.0, 0

    def get_decay(self, step):
        step = max(0, step - 1)
        return 0.0 if step <= 0 else min(1 - (1 + step) ** -self.power, self.max_value)

    @torch.no_grad()
    def step(self, new_model):
        self.decay = self.get_decay(self.optimization_step)
        for param, ema_param in zip(new_model.parameters(), self.averaged_model.parameters()):
            if not param.requires_grad:
                ema_param.copy_(param.to(dtype=ema_param.dtype).data)
            else:
                ema_param.mul_(self.decay)
                ema_param.add_(param.data.to(dtype=ema_param.dtype), alpha=1 - self.decay)
        self.optimization_step += 1


class LowdimWorkspace:
    def __init__(self, cfg, model, ema_model, optimizer, lr_scheduler, logger):
        self.cfg, self.model, self.ema_model = cfg, model, ema_model
        self.optimizer, self.lr_scheduler, self.logger = optimizer, lr_scheduler, logger
        self.global_step, self.epoch = 0, 0

    def run(self, train_dataloader, val_dataloader):
        cfg = self.cfg
        device = torch.device(cfg.device)
        self.model.to(device)
        ema = EMAModel(self.ema_model) if cfg.use_ema else None
        for _ in range(cfg.num_epochs):
            step_log = {}
            train_losses = []
            for batch_idx, batch in enumerate(train_dataloader):
                batch = dict_apply(batch, lambda x: x.to(device, non_blocking=True))
                raw_loss = self.model.compute_loss(batch)
                loss = raw_loss / cfg.gradient_accumulate_every
                loss.backward()
                if self.global_step % cfg.gradient_accumulate_every == 0:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                    self.lr_scheduler.step()
                if ema is not None:
                    ema.step(self.model)
                raw_loss_cpu = raw_loss.item()
                train_losses.append(raw_loss_cpu)
                self.logger.log({"train_loss": raw_loss_cpu, "global_step": self.global_step})
                self.global_step += 1
            step_log["train_loss"] = np.mean(train_losses)

            policy = self.ema_model if cfg.use_ema else self.model
            policy.eval()
            if self.epoch % cfg.val_every == 0:
                with torch.no_grad():
                    val_losses = []
                    for batch_idx, batch in enumerate(val_dataloader):
                        batch = dict_apply(batch, lambda x: x.to(device, non_blocking=True))
                        loss = self.model.compute_loss(batch)
                        val_losses.append(loss)  # expect: TML004
                        if cfg.max_val_steps is not None and batch_idx >= cfg.max_val_steps - 1:
                            break
                    if len(val_losses) > 0:
                        step_log["val_loss"] = torch.mean(torch.tensor(val_losses)).item()
            policy.train()
            self.logger.log(step_log)
            self.epoch += 1
