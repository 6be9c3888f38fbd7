# Source: https://github.com/ostris/ai-toolkit/blob/27a03a91f23eb1b757d5ec2e80ee3e129cfcc350/extensions_built_in/sd_trainer/SDTrainer.py
# Report: ai-toolkit SDTrainer.hook_train_loop() as in the repo: the per-micro-batch helper train_single_accumulation() runs backward and returns loss.detach()
# Shape: `total_loss += loss` accumulates across micro-batches, but the helper already detached the value, so the sum carries no graph
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch
import torch.nn.functional as F


class SDTrainer:
    def __init__(self, sd, accelerator, optimizer, lr_scheduler, params, train_config, ema=None):
        self.sd = sd
        self.accelerator = accelerator
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.params = params
        self.train_config = train_config
        self.ema = ema
        self.is_grad_accumulation_step = False

    def get_noisy_latents(self, batch):
        latents = self.sd.encode_images(batch.tensor)
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
        noisy = self.sd.noise_scheduler.add_noise(latents, noise, timesteps)
        return noisy, noise, timesteps

    def train_single_accumulation(self, batch):
        with torch.no_grad():
            noisy_latents, noise, timesteps = self.get_noisy_latents(batch)
            conditional_embeds = self.sd.encode_prompt(batch.captions)
        noise_pred = self.sd.predict_noise(
            latents=noisy_latents,
            conditional_embeddings=conditional_embeds,
            timestep=timesteps,
        )
        loss = F.mse_loss(noise_pred.float(), noise.float(), reduction="none")
        loss = loss.mean([1, 2, 3])
        loss_multiplier = batch.loss_multiplier_tensor.to(loss.device)
        loss = (loss * loss_multiplier).mean()
        self.accelerator.backward(loss)
        return loss.detach()

    def end_of_training_loop(self):
        pass

    def hook_train_loop(self, batch):
        if isinstance(batch, list):
            batch_list = batch
        else:
            batch_list = [batch]
        total_loss = None
        self.optimizer.zero_grad()
        for batch in batch_list:
            loss = self.train_single_accumulation(batch)
            if total_loss is None:
                total_loss = loss
            else:
                total_loss += loss

        if not self.is_grad_accumulation_step:
            self.accelerator.clip_grad_norm_(self.params, self.train_config.max_grad_norm)
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            if self.ema is not None:
                self.ema.update()
        self.lr_scheduler.step()

        loss_dict = OrderedDict({"loss": (total_loss / len(batch_list)).item()})
        self.end_of_training_loop()
        return loss_dict

    def run(self, dataloader, steps, logger):
        for step, batch in enumerate(dataloader):
            if step >= steps:
                break
            loss_dict = self.hook_train_loop(batch)
            if step % 10 == 0:
                logger.info(f"step {step}: loss {loss_dict['loss']:.4e}")
