# Source: https://github.com/TeTo16/Image_Prediction_Project/blob/5153cb27d9e01f221f2899b6abd29eb529cd464d/src/validate/validate_binary.py
# Report: audit: validate_binary() puts the fine-tuned ResNet18 in eval mode and runs the whole test loader through it with grad enabled (no torch.no_grad anywhere), once per epoch; only .item() values are kept, so each validation batch pays the full activation peak of a training step
# Shape: train/validate helper functions called from an epoch loop; validation switches to eval() and does forward + criterion + .item() bookkeeping with no grad-disabled context
# Expect: TML003 line 37
import time

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from torchvision.models import resnet18
from torchvision.models.resnet import ResNet18_Weights


def train_binary(model, loader, optimizer, criterion):
    model.train()
    running_loss, running_correct = 0.0, 0
    for inputs, labels in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        if model._get_name() == "Inception3":
            outputs = outputs[0]
        loss = criterion(outputs, labels)
        running_loss += loss.item()
        running_correct += (outputs.data.argmax(1) == labels.argmax(1)).sum().item()
        loss.backward()
        optimizer.step()
    n = len(loader.dataset)
    print(f"Train Loss: {running_loss / n:.4f}, Train Acc: {100.0 * running_correct / n:.2f}")
    return running_loss / n, 100.0 * running_correct / n


def validate_binary(model, loader, criterion):
    model.eval()
    running_loss, running_correct = 0.0, 0
    for inputs, labels in loader:
        output = model(inputs)  # expect: TML003
        loss = criterion(output, labels)
        running_loss += loss.item()
        _, preds = torch.max(output.data, 1)
        _, correct_labels = torch.max(labels, 1)
        running_correct += (preds == correct_labels).sum().item()
    n = len(loader.dataset)
    print(f"Validation Loss: {running_loss / n:.4f}, Validation Acc: {100.0 * running_correct / n:.2f}")
    return running_loss / n, 100.0 * running_correct / n


def run(train_dataset, test_dataset, device, epochs=30, batch_size=64):
    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(test_dataset, batch_size=batch_size, shuffle=False)
    model = resnet18(weights=ResNet18_Weights.DEFAULT).to(device)
    for p in model.parameters():
        p.requires_grad = False
    model.fc = nn.Linear(model.fc.in_features, 2).to(device)
    criterion = nn.BCEWithLogitsLoss(reduction="sum")
    optimizer = optim.Adam(model.parameters(), lr=5e-4)
    history = {"train_loss": [], "train_acc": [], "val_loss": [], "val_acc": []}
    start = time.time()
    for epoch in range(epochs):
        print(f"Epoch {epoch + 1}/{epochs}")
        tl, ta = train_binary(model, train_loader, optimizer, criterion)
        vl, va = validate_binary(model, test_loader, criterion)
        for key, value in zip(history, (tl, ta, vl, va)):
            history[key].append(value)
    print(f"Time: {(time.time() - start) / 60:.2f} minutes")
    return model, history
