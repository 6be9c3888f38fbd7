# Source: https://code-examples.net/ja/q/4c07fb4
# Report: memory not released: an evaluation loop over val_loader without torch.no_grad() keeps building computation graphs that stay resident in memory; fix is to wrap the eval forward in torch.no_grad()
# Shape: evaluate() runs with autograd on and keeps every batch's loss tensor in a history list that is averaged with torch.stack after the loop, so each batch's graph lives until the end
# Expect: TML003 line 15; TML001 line 17
import torch
import torch.nn.functional as F


def evaluate(model, val_loader, device):
    model.eval()
    batch_losses = []
    correct = 0
    for data, target in val_loader:
        data, target = data.to(device), target.to(device)
        output = model(data)  # expect: TML003
        loss = F.nll_loss(output, target)
        batch_losses.append(loss)  # expect: TML001
        correct += output.argmax(dim=1).eq(target).sum().item()
    mean_loss = torch.stack(batch_losses).mean().item()
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
