# Source: https://github.com/stygio/DeepFake-Detection/blob/f77e9e915db32c2dadd5c81c561136d711678e80/tools/network.py
# Report: audit of a video deepfake detector trainer: Network.train() calls register_hooks(epoch) at the top of every epoch, adding a gradient-clamp hook (and, in the noise variant, a Gaussian gradient-noise hook) to every parameter with no handle kept, so hooks pile up epoch after epoch
# Shape: the per-epoch registration is written inline in the epoch loop of the trainer's train() method; the noise hook's closure captures that epoch's device-resident Normal distribution, so every epoch adds closures and CUDA tensors that are never removed
# Expect: TML007 line 41; TML007 line 42
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

    def _batch_accuracy(self, output, labels):
        probs = torch.sigmoid(output).cpu().detach().numpy()
        target = labels.cpu().numpy()
        return float(np.mean(np.round(probs) == target) * 100)

    def train(self, frame_loader, val_fn, epochs=10, lr=1e-3, clip=2.0):
        optimizer = torch.optim.Adam(self.network.parameters(), lr=lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.94)
        scaler = GradScaler()
        history = []

        for epoch in range(1, epochs + 1):
            errors, accuracies = [], []
            self.network.train()
            for param in self.network.parameters():
                param.requires_grad = True

            # gradient noise (annealed with the epoch) and gradient clipping
            gn_mean = torch.zeros(1, device=self.device)
            gn_std = torch.full((1,), 0.1 / (1 + epoch) ** 0.55, device=self.device)
            gradient_noise = torch.distributions.Normal(gn_mean, gn_std)
            for name, p in self.network.named_parameters():
                if p.requires_grad:
                    p.register_hook(lambda grad, noise=gradient_noise: grad + noise.sample()[0])  # expect: TML007
                    p.register_hook(lambda grad: torch.clamp(grad, -clip, clip))  # expect: TML007

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
