# Source: https://github.com/SHI-Labs/Smooth-Diffusion/blob/b765fddd745d249c7d3e5f3fe9fa71f8f093ee5c/train_smooth_diffusion.py
# Report: audited idiom: Smooth Diffusion's LoRA fine-tuning adds a step-wise variation regularizer (autograd.grad(..., create_graph=True) w.r.t. the noise, result used in the loss, never stored in .grad) and keeps a running mean of the variation across steps; step_regularize returns variation_mean.detach()
# Shape: as in the original: the running mean is loop-carried through the helper's return value, but the helper detaches it, so no graph crosses steps; the create_graph=True gradient is consumed by the same step's backward
# Expect: near-miss: must be silent
import math

import torch
import torch.nn.functional as F
from torch import autograd


def step_regularize(fake_img, latents, mean_reg_variation, sqrt_one_minus_alpha_prod, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[1] * fake_img.shape[2] * fake_img.shape[3])
    noise = noise * sqrt_one_minus_alpha_prod
    grad, = autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents, create_graph=True)
    reg_variations = torch.sqrt(grad.pow(2).sum(3).sum(2).sum(1))
    variation_mean = mean_reg_variation + decay * (reg_variations.mean() - mean_reg_variation)
    variation_penalty = (reg_variations - variation_mean).pow(2).mean()
    return variation_penalty, variation_mean.detach(), reg_variations


def train(args, accelerator, unet, vae, text_encoder, noise_scheduler, lora_layers,
          optimizer, lr_scheduler, train_dataloader, weight_dtype, progress_bar):
    def de_noise(noisy_latents, model_pred, timesteps):
        alphas_cumprod = noise_scheduler.alphas_cumprod.to(device=timesteps.device)
        sqrt_alpha_prod = (alphas_cumprod[timesteps] ** 0.5).flatten()[:, None, None, None]
        sqrt_one_minus_alpha_prod = ((1 - alphas_cumprod[timesteps]) ** 0.5).flatten()[:, None, None, None]
        original = (noisy_latents - sqrt_one_minus_alpha_prod * model_pred) / sqrt_alpha_prod
        return original, sqrt_one_minus_alpha_prod

    global_step = 0
    mean_reg_variation = 0
    for epoch in range(args.num_train_epochs):
        unet.train()
        train_loss = 0.0
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(unet):
                latents = vae.encode(batch["pixel_values"].to(dtype=weight_dtype)).latent_dist.sample()
                latents = latents * vae.config.scaling_factor
                noise = torch.randn_like(latents)
                noise.requires_grad_(True)
                bsz = latents.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,),
                                          device=latents.device).long()
                noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
                encoder_hidden_states = text_encoder(batch["input_ids"])[0]
                model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample
                loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                fake_img, sqrt_one_minus_alpha_prod = de_noise(noisy_latents, model_pred, timesteps)
                reg_loss, mean_reg_variation, reg_variations = step_regularize(
                    fake_img, noise, mean_reg_variation, sqrt_one_minus_alpha_prod
                )
                loss_total = loss + args.lambda_reg * reg_loss
                avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
                train_loss += avg_loss.item() / args.gradient_accumulation_steps
                accelerator.backward(loss_total)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(lora_layers.parameters(), args.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress_bar.update(1)
                global_step += 1
                accelerator.log({"train_loss": train_loss}, step=global_step)
                train_loss = 0.0
            logs = {"step_loss": loss.detach().item(), "reg_loss": reg_loss.detach().item(),
                    "mean_reg_variation": mean_reg_variation.item()}
            progress_bar.set_postfix(**logs)
            if global_step >= args.max_train_steps:
                break
    return mean_reg_variation
