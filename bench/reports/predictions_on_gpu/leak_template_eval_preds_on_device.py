# Source: https://github.com/tmuromachi/ml-pytorch-template/blob/7c30067213a570fa1f5057c1a0eaa52bd124c28f/src/evaluate.py
# Report: evaluate() runs under torch.no_grad() but appends every batch's model output and label, both still on the GPU, to Python lists and only concatenates and moves them to CPU after the whole loader, so the full test set's outputs sit on the device
# Shape: a template project: train_model() keeps loss.item() floats, evaluate() collects outputs and labels on the device, torch.cat once after the loop, then argmax and .cpu().numpy()
# Expect: TML004 line 58; TML004 line 59
import numpy as np
import torch
import torch.nn as nn
from torchvision import models


def build_model(num_classes, device):
    net = models.resnet18(weights="IMAGENET1K_V1")
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    return net.to(device)


def train_model(model, train_loader, val_loader, optimizer, criterion, device):
    model.train()
    train_batch_loss = []
    for data, label in train_loader:
        data, label = data.to(device), label.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, label)
        loss.backward()
        optimizer.step()
        train_batch_loss.append(loss.item())

    model.eval()
    val_batch_loss = []
    with torch.no_grad():
        for data, label in val_loader:
            data, label = data.to(device), label.to(device)
            output = model(data)
            val_batch_loss.append(criterion(output, label).item())
    return model, np.mean(train_batch_loss), np.mean(val_batch_loss)


def fit(model, train_loader, val_loader, device, epochs=20, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    curves = {"train": [], "val": []}
    for epoch in range(epochs):
        model, train_l, val_l = train_model(model, train_loader, val_loader, optimizer, criterion, device)
        curves["train"].append(train_l)
        curves["val"].append(val_l)
        print(f"epoch {epoch + 1}: train {train_l:.4f} val {val_l:.4f}")
    return model, curves


def evaluate(model, dataloader, device):
    model.eval()
    preds, labels = [], []
    with torch.no_grad():
        for data, label in dataloader:
            data, label = data.to(device), label.to(device)
            output = model(data)
            preds.append(output)  # expect: TML004
            labels.append(label)  # expect: TML004
    preds = torch.cat(preds, dim=0)
    labels = torch.cat(labels, dim=0)
    _, preds = torch.max(preds, 1)
    return preds.cpu().numpy(), labels.cpu().numpy()
