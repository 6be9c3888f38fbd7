# Source: https://github.com/zjlucam/VisionAssistant/blob/3642074d643782a804e5a8bc111e442884770c20/contextualisation_module/blip22dfe/train_loop.py
# Report: BLIP-2 caption fine-tuning epoch loop (HF model called with labels=input_ids, loss read as outputs.loss); the repo sums the epoch loss with loss.item()
# Shape: as in the repo: total_loss += loss.item() after the optimizer step keeps a Python float; validation sums outputs.loss.item() under no_grad
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm


def to_device(batch, device):
    return {k: v.to(device) for k, v in batch.items()}


def train_epoch(model, dataloader, optimizer, device):
    model.train()
    total_loss = 0
    for batch in tqdm(dataloader, desc="Training"):
        inputs = to_device(batch, device)
        outputs = model(**inputs, labels=inputs["input_ids"])
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total_loss += loss.item()
    return total_loss / len(dataloader)


def validate_epoch(model, dataloader, device):
    model.eval()
    total_loss = 0
    with torch.no_grad():
        for batch in tqdm(dataloader, desc="Validation"):
            inputs = to_device(batch, device)
            outputs = model(**inputs, labels=inputs["input_ids"])
            total_loss += outputs.loss.item()
    return total_loss / len(dataloader)


def fit(model, train_loader, val_loader, optimizer, device, epochs=5, ckpt="blip2_ckpt.pt"):
    best = float("inf")
    history = []
    for epoch in range(epochs):
        train_loss = train_epoch(model, train_loader, optimizer, device)
        val_loss = validate_epoch(model, val_loader, device)
        history.append({"epoch": epoch, "train": float(train_loss), "val": val_loss})
        print(f"epoch {epoch}: train {float(train_loss):.4f} val {val_loss:.4f}")
        if val_loss < best:
            best = val_loss
            torch.save(model.state_dict(), ckpt)
    return history
