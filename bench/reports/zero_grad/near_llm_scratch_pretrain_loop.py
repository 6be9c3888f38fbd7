# Source: https://github.com/affaan-m/ECC/pull/3122
# Report: review of an LLM-from-scratch pretraining skill: the training loop called loss.backward() and optimizer.step() per batch without ever clearing gradients, so every update applied the stale gradients of all earlier batches too
# Shape: the reviewer's suggested fix: optimizer.zero_grad() at the top of every batch, before the loss is computed
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return F.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def calc_loss_loader(data_loader, model, device, num_batches=None):
    total_loss = 0.0
    num_batches = min(num_batches or len(data_loader), len(data_loader))
    for i, (x, y) in enumerate(data_loader):
        if i >= num_batches:
            break
        total_loss += calc_loss_batch(x, y, model, device).item()
    return total_loss / max(num_batches, 1)


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def train_model_simple(model, train_loader, val_loader, optimizer, device,
                       num_epochs, eval_freq, eval_iter):
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(x, y, model, device)
            loss.backward(); optimizer.step()
            tokens_seen += x.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch + 1} (Step {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")
    return train_losses, val_losses, track_tokens_seen
