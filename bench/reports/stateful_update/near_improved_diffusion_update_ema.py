# Source: https://github.com/openai/improved-diffusion/blob/main/improved_diffusion/train_util.py
# Report: improved-diffusion's TrainLoop keeps one EMA copy of the master params per rate (copy.deepcopy of the Parameters) and calls nn.update_ema after every opt.step(); update_ema works in place on targ.detach()
# Shape: the EMA copies are leaves that require grad, but the in-place update goes through targ.detach() (same storage, no autograd), so no graph is recorded; logged losses are reduced with .item()/.detach().cpu().numpy() before the running-mean logger keeps them
# Expect: near-miss: must be silent
import copy
import functools

import numpy as np
import torch as th


class KVLogger:
    def __init__(self):
        self.name2val = {}
        self.name2cnt = {}

    def logkv_mean(self, key, val):
        oldval, cnt = self.name2val.get(key, 0.0), self.name2cnt.get(key, 0)
        self.name2val[key] = oldval * cnt / (cnt + 1) + val / (cnt + 1)
        self.name2cnt[key] = cnt + 1

    def dumpkvs(self):
        print(dict(self.name2val))
        self.name2val.clear()
        self.name2cnt.clear()


logger = KVLogger()


def update_ema(target_params, source_params, rate=0.99):
    """Update target parameters to be closer to those of source parameters."""
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


def log_loss_dict(diffusion, ts, losses):
    for key, values in losses.items():
        logger.logkv_mean(key, values.mean().item())
        for sub_t, sub_loss in zip(ts.cpu().numpy(), values.detach().cpu().numpy()):
            quartile = int(4 * sub_t / diffusion.num_timesteps)
            logger.logkv_mean(f"{key}_q{quartile}", sub_loss)


class TrainLoop:
    def __init__(self, model, diffusion, data, schedule_sampler, microbatch, lr, ema_rate, log_interval, device):
        self.model = model
        self.diffusion = diffusion
        self.data = data
        self.schedule_sampler = schedule_sampler
        self.microbatch = microbatch
        self.device = device
        self.log_interval = log_interval
        self.ema_rate = [ema_rate] if isinstance(ema_rate, float) else [float(x) for x in ema_rate.split(",")]
        self.master_params = list(self.model.parameters())
        self.opt = th.optim.AdamW(self.master_params, lr=lr)
        self.ema_params = [copy.deepcopy(self.master_params) for _ in range(len(self.ema_rate))]
        self.step = 0

    def run_loop(self, max_steps):
        while self.step < max_steps:
            batch, cond = next(self.data)
            self.forward_backward(batch, cond)
            self.optimize_normal()
            if self.step % self.log_interval == 0:
                logger.dumpkvs()
            self.step += 1

    def forward_backward(self, batch, cond):
        self.opt.zero_grad(set_to_none=True)
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i: i + self.microbatch].to(self.device)
            micro_cond = {k: v[i: i + self.microbatch].to(self.device) for k, v in cond.items()}
            t, weights = self.schedule_sampler.sample(micro.shape[0], self.device)
            compute_losses = functools.partial(
                self.diffusion.training_losses, self.model, micro, t, model_kwargs=micro_cond
            )
            losses = compute_losses()
            loss = (losses["loss"] * weights).mean()
            log_loss_dict(self.diffusion, t, {k: v * weights for k, v in losses.items()})
            loss.backward()

    def optimize_normal(self):
        sqsum = 0.0
        for p in self.master_params:
            sqsum += (p.grad ** 2).sum().item()
        logger.logkv_mean("grad_norm", np.sqrt(sqsum))
        self.opt.step()
        for rate, params in zip(self.ema_rate, self.ema_params):
            update_ema(params, self.master_params, rate=rate)
