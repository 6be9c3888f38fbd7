# Source: https://github.com/wandb/wandb/issues/354
# Report: logging PyTorch loss tensors with wandb.log({loss: tensor}) leaked memory severely (about 40GB in under an hour just by logging loss values), while logging tensor.item() made the leak disappear.
# Shape: fixed variant: the training step still returns live loss tensors in a dict, but the logging call converts every one of them with .item() before wandb stores it.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import wandb


def train_step(model, optimizer, batch, device):
    images, targets = (t.to(device) for t in batch)
    logits = model(images)
    ce = F.cross_entropy(logits, targets)
    l2 = sum((p ** 2).sum() for p in model.parameters()) * 1e-5
    loss = ce + l2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"loss": loss, "ce": ce, "l2": l2}


def train(model, loader, epochs=10, lr=1e-3, device="cuda"):
    wandb.init(project="retina-cls", config={"lr": lr, "epochs": epochs})
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)
    step = 0
    for epoch in range(epochs):
        for batch in loader:
            losses = train_step(model, optimizer, batch, device)
            metrics = {f"train/{name}": value.item() for name, value in losses.items()}
            metrics.update({"lr": scheduler.get_last_lr()[0], "epoch": epoch})
            wandb.log(metrics, step=step)
            step += 1
        scheduler.step()
    wandb.finish()
