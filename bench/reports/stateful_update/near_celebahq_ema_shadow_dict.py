# Source: https://github.com/Tin-Hoang/humanfaces-diffusion-generation/blob/abf1de25e945e9a6a012e79f3ade8983db7f2a36/diffusion_models/utils/ema.py
# Report: audited idiom: the repository's EMA helper for its face-generation UNet updates each shadow weight through .data on both sides, so the per-step EMA never records autograd history
# Shape: same EMA.update() called once per optimizer step from train_loop(); the loop-carried shadow update reads param.data and writes shadow.data, which carries no graph (kept as in the original, .data rather than .detach())
# Expect: near-miss: must be silent
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from tqdm.auto import tqdm


class EMA:
    def __init__(self, model, decay=0.9999):
        self.decay = decay
        self.shadow = {}
        self.device = next(model.parameters()).device
        self.register(model)

    def register(self, model):
        for name, param in model.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.clone().detach().to(self.device)

    def update(self, model):
        for name, param in model.named_parameters():
            if param.requires_grad:
                assert name in self.shadow
                self.shadow[name].data = (
                    self.decay * self.shadow[name].data
                    + (1.0 - self.decay) * param.data.to(self.device)
                )

    def apply_shadow(self, model):
        for name, param in model.named_parameters():
            if param.requires_grad and name in self.shadow:
                param.data.copy_(self.shadow[name].data)

    def state_dict(self):
        return self.shadow


def train_loop(config, model, noise_scheduler, optimizer, train_dataloader, lr_scheduler):
    accelerator = Accelerator(
        mixed_precision=config.mixed_precision,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
    )
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    ema = EMA(accelerator.unwrap_model(model), decay=config.ema_decay)
    global_step = 0
    for epoch in range(config.num_epochs):
        progress_bar = tqdm(total=len(train_dataloader), disable=not accelerator.is_local_main_process)
        progress_bar.set_description(f"Epoch {epoch}")
        for step, batch in enumerate(train_dataloader):
            clean_images = batch["images"]
            bs = clean_images.shape[0]
            noise = torch.randn(clean_images.shape).to(clean_images.device)
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (bs,), device=clean_images.device
            ).long()
            noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
            with accelerator.accumulate(model):
                noise_pred = model(noisy_images, timesteps, return_dict=False)[0]
                loss = F.mse_loss(noise_pred, noise)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                ema.update(accelerator.unwrap_model(model))
            progress_bar.update(1)
            logs = {"loss": loss.detach().item(), "lr": lr_scheduler.get_last_lr()[0], "step": global_step}
            progress_bar.set_postfix(**logs)
            accelerator.log(logs, step=global_step)
            global_step += 1
        if accelerator.is_main_process:
            torch.save(ema.state_dict(), os.path.join(config.output_dir, "ema_unet.pt"))
