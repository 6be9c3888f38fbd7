# Source: https://github.com/tpeat/clip-finegrained-alignment/blob/main/finetune/finetuner.py
# Report: CLIP contrastive fine-tuner class: training_step returns a dict of (graph-attached, accumulation-scaled) losses; train() keeps losses["total_loss"].item() per step
# Shape: the loss dict travels from training_step to train(); only a Python float (.item()) goes into the per-epoch list; gradient accumulation zeroes grads every N steps
# Expect: near-miss: must be silent
import os

import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm
from transformers import CLIPModel


class CustomCLIPLoss(torch.nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature

    def forward(self, image_features, text_features):
        image_features = F.normalize(image_features, dim=-1)
        text_features = F.normalize(text_features, dim=-1)
        logits = image_features @ text_features.T / self.temperature
        labels = torch.arange(logits.size(0), device=logits.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
        return {"total_loss": loss, "contrastive": loss}


class CLIPFineTuner:
    def __init__(self, config):
        self.config = config
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = CLIPModel.from_pretrained(config.clip_model).to(self.device)
        self.criterion = CustomCLIPLoss().to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.lr)
        self.scaler = GradScaler()
        self.global_step = 0
        self.best_loss = float("inf")
        self.checkpoint_dir = os.path.join("checkpoints", config.experiment_name)

    def training_step(self, batch):
        images, texts = batch
        images, texts = images.to(self.device), texts.to(self.device)
        with autocast():
            outputs = self.model(pixel_values=images, input_ids=texts)
            losses = self.criterion(outputs.image_embeds, outputs.text_embeds)
            losses = {k: v / self.config.gradient_accumulation_steps for k, v in losses.items()}
        self.scaler.scale(losses["total_loss"]).backward()
        if (self.global_step + 1) % self.config.gradient_accumulation_steps == 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
        self.global_step += 1
        return losses

    def train(self, train_dataloader, num_epochs):
        self.model.train()
        accum = self.config.gradient_accumulation_steps
        for epoch in range(num_epochs):
            epoch_losses = []
            progress_bar = tqdm(train_dataloader, desc=f"Epoch {epoch + 1}/{num_epochs}")
            self.optimizer.zero_grad()
            for batch in progress_bar:
                losses = self.training_step(batch)
                epoch_losses.append(losses["total_loss"].item() * accum)
                progress_bar.set_postfix({"loss": f'{losses["total_loss"].item() * accum:.4f}'})
            avg_loss = float(sum(epoch_losses)) / len(epoch_losses)
            print(f"Epoch {epoch + 1}/{num_epochs}, Average Loss: {avg_loss:.4f}")
            if avg_loss < self.best_loss:
                self.best_loss = avg_loss
                self.save_checkpoint("best.pt")

    def save_checkpoint(self, filename):
        os.makedirs(self.checkpoint_dir, exist_ok=True)
        torch.save({
            "model_state_dict": self.model.state_dict(),
            "optimizer_state_dict": self.optimizer.state_dict(),
            "global_step": self.global_step,
            "best_loss": self.best_loss,
        }, os.path.join(self.checkpoint_dir, filename))
