# Source: https://github.com/andrewXiaY/LayerFusion/blob/00c1fa4a78293d9547b38fb17b82f3ad27d963fb/version2/workflows/eval_loop.py
# Report: audit: generic_eval_loop() puts the fusion net in eval mode and runs every test batch through it with autograd on (no no_grad anywhere), once per epoch from the training script
# Shape: a workflow helper takes a dict batch, moves its fields to the GPU, reads out["output"] from the model's dict result and sums .item() losses; the forward still records a graph every batch
# Expect: TML003 line 39
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def run_train_epoch(loader, model, criterion, optimizer, epoch):
    model.train()
    step_losses = []
    for step, batch in enumerate(loader):
        data = batch["data"].cuda()
        label = batch["label"].cuda().long()
        result = model(data)
        loss = criterion(result["output"], label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        if step and step % 100 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    return step_losses


def run_eval_epoch(loader, criterion, model, task="long"):
    model.eval()
    total_loss, n_correct = 0.0, 0
    n_batches = 0
    for batch in loader:
        batch["data"] = batch["data"].cuda()
        if task == "long":
            batch["label"] = batch["label"].cuda().long()
        else:
            batch["label"] = batch["label"].cuda()
        out = model(batch["data"])["output"]  # expect: TML003
        total_loss += criterion(out, batch["label"]).item()
        if task == "long":
            guess = out.argmax(dim=1)
            n_correct += guess.eq(batch["label"]).sum().item()
        n_batches += 1
    total_loss /= max(n_batches, 1)
    acc = 100.0 * n_correct / len(loader.dataset)
    print(f"val loss {total_loss:.4f}  acc {acc:.1f}%")
    return total_loss


def main(model, train_set, test_set, ckpt_dir, max_epoch=50, batch_size=128):
    os.makedirs(ckpt_dir, exist_ok=True)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=batch_size)
    model.cuda()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=1e-5)
    history = []
    for epoch in range(1, max_epoch + 1):
        losses = run_train_epoch(train_loader, model, criterion, optimizer, epoch)
        if epoch % 10 == 0:
            torch.save(model.state_dict(), os.path.join(ckpt_dir, f"model_{epoch}.pth"))
        val_loss = run_eval_epoch(test_loader, criterion, model)
        history.append((sum(losses) / len(losses), val_loss))
    return history
