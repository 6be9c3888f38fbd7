# Source: https://github.com/NPURG/FaKnow/blob/142e800d973eb3866279ff61cad0774a70befb3d/faknow/train/trainer_gpu.py
# Report: audit of a fake-news detection framework's GPU trainer: evaluate() runs under @torch.no_grad() but appends every model.predict(batch) result, still on the device, to a list and concatenates only after the loop, so the whole validation set's scores sit on the GPU
# Shape: the model's predict() moves the batch to the GPU and returns device probabilities; the trainer's decorated evaluate keeps each one in outputs until torch.concat
# Expect: TML004 line 58
import sys

import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm


class TextClassifier(nn.Module):
    def __init__(self, encoder, hidden, device="cuda"):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden, 2)
        self.device = device

    def forward(self, token_ids, mask):
        return self.head(self.encoder(token_ids, mask).mean(dim=1))

    def calculate_loss(self, batch):
        logits = self(batch["token_id"].to(self.device), batch["mask"].to(self.device))
        loss = F.cross_entropy(logits, batch["label"].to(self.device))
        acc = (logits.argmax(-1).cpu() == batch["label"]).float().mean().item()
        return loss, {"acc": acc}

    def predict(self, batch):
        logits = self(batch["token_id"].to(self.device), batch["mask"].to(self.device))
        return torch.softmax(logits, dim=-1)


class GPUTrainer:
    def __init__(self, model, evaluator, optimizer, scheduler=None):
        self.model = model
        self.evaluator = evaluator
        self.optimizer = optimizer
        self.scheduler = scheduler

    def _train_epoch(self, loader, epoch):
        self.model.train()
        pbar = tqdm(loader, ncols=100, desc="Training")
        loss = others = None
        for batch in pbar:
            loss, others = self.model.calculate_loss(batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            pbar.set_postfix_str(f"loss={loss.item():.6f}")
        print(f"epoch {epoch}: loss={loss.item():.6f} {others}", file=sys.stderr)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        outputs, labels = [], []
        for batch in loader:
            outputs.append(self.model.predict(batch))  # expect: TML004
            labels.append(batch["label"])
        return self.evaluator(torch.concat(outputs).cpu(), torch.concat(labels))

    def fit(self, train_loader, num_epochs, validate_loader=None):
        for epoch in range(num_epochs):
            self._train_epoch(train_loader, epoch)
            if validate_loader is not None:
                result = self.evaluate(validate_loader)
                print("validation result: " + ", ".join(f"{k}={v:.4f}" for k, v in result.items()), file=sys.stderr)
            if self.scheduler is not None:
                self.scheduler.step()
