# Source: https://github.com/kohya-ss/sd-scripts/blob/6edbe00547bac6c2efb2d6952eb910851662cdf2/library/train_util.py
# Report: audited idiom: sd-scripts' LossRecorder keeps one float per in-epoch step and a running loss_total for the avr_loss moving average; the training scripts feed it current_loss = loss.detach().item()
# Shape: same recorder and same per-step call; the value handed to loss_recorder.add(...) is a Python float, so the stored list and the running total hold no tensors
# Expect: near-miss: must be silent
import torch
from accelerate import Accelerator
from tqdm import tqdm


class LossRecorder:
    def __init__(self):
        self.loss_list: list[float] = []
        self.loss_total: float = 0.0

    def add(self, *, epoch: int, step: int, loss: float) -> None:
        if epoch == 0:
            self.loss_list.append(loss)
        else:
            while len(self.loss_list) <= step:
                self.loss_list.append(0.0)
            self.loss_total -= self.loss_list[step]
            self.loss_list[step] = loss
        self.loss_total += loss

    @property
    def moving_average(self) -> float:
        return self.loss_total / len(self.loss_list)


class NetworkTrainer:
    def process_batch(self, batch, unet, text_encoder, vae, noise_scheduler, weight_dtype):
        with torch.no_grad():
            latents = vae.encode(batch["images"].to(dtype=weight_dtype)).latent_dist.sample()
            latents = latents * 0.18215
            encoder_hidden_states = text_encoder(batch["input_ids"])[0]
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],),
                                  device=latents.device)
        noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
        noise_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample
        loss = torch.nn.functional.mse_loss(noise_pred.float(), noise.float(), reduction="none")
        loss = loss.mean([1, 2, 3]) * batch["loss_weights"]
        return loss.mean()

    def train(self, args, accelerator: Accelerator, network, unet, text_encoder, vae,
              noise_scheduler, optimizer, lr_scheduler, train_dataloader, weight_dtype):
        loss_recorder = LossRecorder()
        progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
        global_step = 0
        for epoch in range(args.num_train_epochs):
            network.on_epoch_start(text_encoder, unet)
            for step, batch in enumerate(train_dataloader):
                with accelerator.accumulate(network):
                    loss = self.process_batch(batch, unet, text_encoder, vae, noise_scheduler, weight_dtype)
                    accelerator.backward(loss)
                    if accelerator.sync_gradients and args.max_grad_norm != 0.0:
                        accelerator.clip_grad_norm_(network.get_trainable_params(), args.max_grad_norm)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                if accelerator.sync_gradients:
                    progress_bar.update(1)
                    global_step += 1
                current_loss = loss.detach().item()
                loss_recorder.add(epoch=epoch, step=step, loss=current_loss)
                avr_loss = loss_recorder.moving_average
                logs = {"avr_loss": avr_loss}
                progress_bar.set_postfix(**logs)
                if global_step >= args.max_train_steps:
                    break
            accelerator.log({"loss/epoch": loss_recorder.moving_average}, step=epoch + 1)
