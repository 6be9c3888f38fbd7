# Source: https://github.com/gogo5911/PyTorch_Network_CNN/blob/3779d96160d8e6d3a3c7396b25e5fb10de29b99d/3.VGG/solver.py
# Report: audit of a VGG-on-STL10 solver whose test() has no no_grad of its own and is safe only because the epoch loop calls it inside torch.no_grad(); this is the variant without the caller's block
# Shape: same solver helpers; the epoch loop calls test() directly, so every validation forward after model.eval() records the VGG activations for a backward that never comes
# Expect: TML003 line 30
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def train(model, criterion, optimizer, train_loader, device):
    model.train()
    running_loss = 0.0
    for imgs, classes in train_loader:
        imgs, classes = imgs.to(device), classes.to(device)
        output = model(imgs)
        loss = criterion(output, classes)
        running_loss += loss.item() * output.size(0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, optimizer, running_loss / len(train_loader.dataset)


def test(model, criterion, valid_loader, device):
    model.eval()
    running_loss = 0.0
    for imgs, classes in valid_loader:
        imgs, classes = imgs.to(device), classes.to(device)
        output = model(imgs)  # expect: TML003
        loss = criterion(output, classes)
        running_loss += loss.item() * output.size(0)
    return model, running_loss / len(valid_loader.dataset)


def get_accuracy(model, data_loader, device):
    correct = 0
    with torch.no_grad():
        model.eval()
        for imgs, classes in data_loader:
            imgs, classes = imgs.to(device), classes.to(device)
            pred = model(imgs).argmax(dim=1)
            correct += pred.eq(classes).sum().item()
    return 100.0 * correct / len(data_loader.dataset)


def run(model, epochs=15, batch_size=64, lr=1e-3, device="cuda"):
    tf = transforms.Compose([transforms.Resize(256), transforms.RandomCrop(224), transforms.ToTensor(),
                             transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    train_loader = DataLoader(datasets.STL10("STL10_data", split="train", transform=tf, download=True),
                              batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(datasets.STL10("STL10_data", split="test", transform=tf, download=True),
                             batch_size=batch_size, shuffle=False)
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss().to(device)
    train_losses, test_losses = [], []
    for epoch in range(epochs):
        model, optimizer, train_loss = train(model, criterion, optimizer, train_loader, device)
        train_losses.append(train_loss)
        model, test_loss = test(model, criterion, test_loader, device)
        test_losses.append(test_loss)
        valid_acc = get_accuracy(model, test_loader, device)
        print(f"epoch {epoch}: train {train_loss:.4f} valid {test_loss:.4f} acc {valid_acc:.2f}")
        torch.save({"model_state_dict": model.state_dict(), "epoch": epoch}, f"epoch{epoch}.pth")
    return train_losses, test_losses
