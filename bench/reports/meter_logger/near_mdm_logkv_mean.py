# Source: https://github.com/GuyTevet/motion-diffusion-model/blob/3c0ce16b367650305d647661bbc53398e8ac2176/train/training_loop.py
# Report: audited MDM TrainLoop: forward_backward passes the weighted per-sample loss dict to log_loss_dict, which feeds logger.logkv_mean a running mean per key; the repository calls values.mean().item()
# Shape: as in the repository, the helper hands values.mean().item() and detached numpy quartiles to logkv_mean, so the logger only ever accumulates Python/numpy numbers; the loss dict itself still travels through the helper
# Expect: near-miss: must be silent
from collections import defaultdict

import torch


class KVLogger:
    def __init__(self):
        self.name2val = defaultdict(float)
        self.name2cnt = defaultdict(int)

    def logkv(self, key, val):
        self.name2val[key] = val

    def logkv_mean(self, key, val):
        oldval, cnt = self.name2val[key], self.name2cnt[key]
        self.name2val[key] = oldval * cnt / (cnt + 1) + val / (cnt + 1)
        self.name2cnt[key] = cnt + 1

    def dumpkvs(self):
        out = dict(self.name2val)
        self.name2val.clear()
        self.name2cnt.clear()
        return out


logger = KVLogger()


def log_loss_dict(diffusion, ts, losses):
    for key, values in losses.items():
        logger.logkv_mean(key, values.mean().item())
        for sub_t, sub_loss in zip(ts.cpu().numpy(), values.detach().cpu().numpy()):
            quartile = int(4 * sub_t / diffusion.num_timesteps)
            logger.logkv_mean(f"{key}_q{quartile}", sub_loss)


class TrainLoop:
    def __init__(self, model, diffusion, data, opt, schedule_sampler, log_interval=50):
        self.model = model
        self.diffusion = diffusion
        self.data = data
        self.opt = opt
        self.schedule_sampler = schedule_sampler
        self.log_interval = log_interval
        self.step = 0

    def run_loop(self, num_epochs, device):
        for epoch in range(num_epochs):
            for motion, cond in self.data:
                motion = motion.to(device)
                self.run_step(motion, cond)
                if self.step % self.log_interval == 0:
                    for k, v in logger.dumpkvs().items():
                        print(f"step {self.step}: {k}={float(v):.4f}")
                self.step += 1

    def run_step(self, batch, cond):
        self.forward_backward(batch, cond)
        self.opt.step()
        logger.logkv("step", self.step)

    def forward_backward(self, batch, cond):
        self.opt.zero_grad()
        t, weights = self.schedule_sampler.sample(batch.shape[0], batch.device)
        losses = self.diffusion.training_losses(self.model, batch, t, model_kwargs=cond)
        loss = (losses["loss"] * weights).mean()
        log_loss_dict(self.diffusion, t, {k: v * weights for k, v in losses.items()})
        loss.backward()
