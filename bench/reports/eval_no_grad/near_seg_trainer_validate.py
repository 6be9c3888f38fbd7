# Source: https://stackoverflow.com/questions/54374935/how-can-i-fix-this-strange-error-runtimeerror-cuda-error-out-of-memory
# Report: training completed, then "RuntimeError: CUDA error: out of memory" hit during validation even after cutting the batch size; answer/comment: run validation under torch.no_grad()
# Shape: same Trainer, validate() is decorated with @torch.no_grad() so the eval forward records no graph; metrics kept as Python numbers
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class SegTrainer:
    def __init__(self, model, optimizer, train_loader, val_loader, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.device = device
        self.history = {"train_loss": [], "val_loss": [], "val_acc": []}

    def train_one_epoch(self):
        self.model.train()
        running = 0.0
        for images, masks in self.train_loader:
            images, masks = images.to(self.device), masks.to(self.device)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(images), masks)
            loss.backward()
            self.optimizer.step()
            running += loss.item()
        return running / max(len(self.train_loader), 1)

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        total_loss, correct, seen = 0.0, 0, 0
        for images, masks in self.val_loader:
            images = images.to(self.device, non_blocking=True)
            masks = masks.to(self.device, non_blocking=True)
            logits = self.model(images)
            loss = F.cross_entropy(logits, masks)
            total_loss += loss.item() * images.size(0)
            preds = logits.argmax(dim=1)
            correct += (preds == masks).sum().item()
            seen += masks.numel()
        return total_loss / len(self.val_loader.dataset), correct / max(seen, 1)

    def fit(self, epochs, ckpt_path="best.pt"):
        best = float("inf")
        for epoch in range(epochs):
            train_loss = self.train_one_epoch()
            val_loss, val_acc = self.validate()
            self.history["train_loss"].append(train_loss)
            self.history["val_loss"].append(val_loss)
            self.history["val_acc"].append(val_acc)
            print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f} acc {val_acc:.3f}")
            if val_loss < best:
                best = val_loss
                torch.save(self.model.state_dict(), ckpt_path)
        return self.history
