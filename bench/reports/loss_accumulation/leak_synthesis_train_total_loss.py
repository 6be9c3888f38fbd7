# Source: https://github.com/NilBiescas/Synthesis_Project/blob/2729f55bb2b0368c306e5bbef47bd894a5444423/train.py
# Report: audit of a course project's train(): it sums total_loss += loss.item() with a comment asking why .item() matters; this is the variant the comment is about, summing the loss tensor itself into an epoch total that lives until the function returns
# Shape: train() returns total_loss / len(loader.dataset) to a wandb-logging main loop; without .item() the running total is a CUDA tensor chained to every batch's loss for the whole epoch
# Expect: TML001 line 24
import torch
import torch.nn as nn
import wandb


def train(epoch, criterion, model, optimizer, loader, device="cuda"):
    total_loss = 0.0
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        data, target = data.to(device), target.to(device)
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 100 == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(loader.dataset),
                100.0 * batch_idx / len(loader), loss.item()))
        total_loss += loss  # expect: TML001
    return total_loss / len(loader.dataset)


def test(criterion, model, loader, device="cuda"):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += criterion(output, target).item()
            correct += (output.argmax(dim=1) == target).sum().item()
    n = len(loader.dataset)
    return test_loss / n, correct / n


def main(model, train_loader, test_loader, epochs=20, lr=1e-3, device="cuda"):
    wandb.init(project="synthesis", config={"epochs": epochs, "lr": lr})
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    for epoch in range(1, epochs + 1):
        train_loss = train(epoch, criterion, model, optimizer, train_loader, device)
        test_loss, acc = test(criterion, model, test_loader, device)
        scheduler.step()
        wandb.log({"train_loss": float(train_loss), "test_loss": test_loss, "acc": acc}, step=epoch)
    torch.save(model.state_dict(), "model.pt")
    wandb.finish()
