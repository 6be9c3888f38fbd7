# Source: https://github.com/stygio/DeepFake-Detection/blob/f77e9e915db32c2dadd5c81c561136d711678e80/tools/network.py
# Report: audit of a video deepfake detector trainer (fixed variant): the repo's per-epoch register_hooks(epoch) call piled a new gradient-clamp / gradient-noise hook onto every parameter each epoch; registering them once avoids it
# Shape: the hooks are registered once per parameter before the epoch loop (a loop over parameters, not over steps); the annealed noise scale is a plain float on self that the single hook reads, updated each epoch
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler
from tqdm import tqdm


class Network:
    def __init__(self, model, device="cuda"):
        self.device = torch.device(device)
        self.network = model.to(self.device)
        self.criterion = nn.BCEWithLogitsLoss()
        self.noise_std = 0.1

    def _noisy_grad(self, grad):
        return grad + torch.randn_like(grad) * self.noise_std

    def _batch_accuracy(self, output, labels):
        probs = torch.sigmoid(output).cpu().detach().numpy()
        target = labels.cpu().numpy()
        return float(np.mean(np.round(probs) == target) * 100)

    def train(self, frame_loader, val_fn, epochs=10, lr=1e-3, clip=2.0):
        optimizer = torch.optim.Adam(self.network.parameters(), lr=lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.94)
        scaler = GradScaler()
        history = []
        # gradient noise and gradient clipping: one hook of each per parameter
        for name, p in self.network.named_parameters():
            if p.requires_grad:
                p.register_hook(self._noisy_grad)
                p.register_hook(lambda grad: torch.clamp(grad, -clip, clip))

        for epoch in range(1, epochs + 1):
            errors, accuracies = [], []
            self.network.train()
            for param in self.network.parameters():
                param.requires_grad = True

            # anneal the noise read by the already-registered hooks
            self.noise_std = 0.1 / (1 + epoch) ** 0.55

            progress = tqdm(frame_loader, desc=f"epoch {epoch}")
            for frames, labels in progress:
                frames = frames.to(self.device, non_blocking=True)
                labels = labels.to(self.device).float().view(-1, 1)

                optimizer.zero_grad()
                output = self.network(frames)
                err = self.criterion(output, labels)
                scaler.scale(err).backward()
                scaler.step(optimizer)
                scaler.update()

                errors.append(err.item())
                accuracies.append(self._batch_accuracy(output, labels))
                progress.set_postfix(loss=round(np.mean(errors), 3), acc=round(np.mean(accuracies), 2))

            val = val_fn(self.network)
            scheduler.step()
            history.append({"epoch": epoch, "train_loss": float(np.mean(errors)),
                            "train_acc": float(np.mean(accuracies)), **val})
        return history
