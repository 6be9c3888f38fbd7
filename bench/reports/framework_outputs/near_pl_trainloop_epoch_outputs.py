# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/1510
# Report: GPU (with AMP) and CPU memory grew through the whole first epoch; the training loop kept every step's output in an epoch list, detached but still on the GPU
# Shape: same epoch loop, but each step output is detached and copied to the CPU before it is kept for training_epoch_end
# Expect: near-miss: must be silent
import torch
from torch.cuda.amp import GradScaler, autocast


class MiniTrainer:
    def __init__(self, max_epochs, device="cuda", precision=16):
        self.max_epochs = max_epochs
        self.device = torch.device(device)
        self.use_amp = precision == 16
        self.scaler = GradScaler(enabled=self.use_amp)
        self.global_step = 0

    def fit(self, module, train_loader):
        module.to(self.device)
        optimizer = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            epoch_outputs = self.run_training_epoch(module, optimizer, train_loader)
            if hasattr(module, "training_epoch_end"):
                module.training_epoch_end(epoch_outputs)

    def run_training_epoch(self, module, optimizer, loader):
        outputs = []
        module.train()
        for batch_idx, (x, y) in enumerate(loader):
            x, y = x.to(self.device), y.to(self.device)
            with autocast(enabled=self.use_amp):
                logits = module(x)
                loss = module.loss_fn(logits, y)
            optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(optimizer)
            self.scaler.update()
            self.global_step += 1
            step_out = {"loss": loss, "logits": logits, "target": y}
            # detach and move off the GPU so neither graph nor device memory is kept
            detached = {k: v.detach().cpu() for k, v in step_out.items()}
            outputs.append(detached)
        return outputs
