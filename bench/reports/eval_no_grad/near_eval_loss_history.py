# Source: https://code-examples.net/ja/q/4c07fb4
# Report: memory not released: an evaluation loop over val_loader without torch.no_grad() keeps building computation graphs that stay resident in memory; fix is to wrap the eval forward in torch.no_grad()
# Shape: evaluate() runs its loop under torch.no_grad() and keeps each batch loss as a Python float; the mean is taken over plain numbers
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def evaluate(model, val_loader, device):
    model.eval()
    batch_losses = []
    correct = 0
    with torch.no_grad():
        for data, target in val_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            loss = F.nll_loss(output, target)
            batch_losses.append(loss.item())
            correct += output.argmax(dim=1).eq(target).sum().item()
    mean_loss = sum(batch_losses) / max(len(batch_losses), 1)
    return mean_loss, correct / len(val_loader.dataset)


def train(model, train_loader, val_loader, optimizer, epochs, device="cuda"):
    model.to(device)
    log = []
    for epoch in range(1, epochs + 1):
        model.train()
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
        val_loss, val_acc = evaluate(model, val_loader, device)
        log.append({"epoch": epoch, "val_loss": val_loss, "val_acc": val_acc})
        print(f"epoch {epoch}: val_loss={val_loss:.4f} val_acc={val_acc:.4f}")
    return log
