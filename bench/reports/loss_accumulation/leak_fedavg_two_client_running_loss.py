# Source: https://github.com/SupernovaATW/KD_vs_FedAvg/blob/main/common/fedavg_training.py
# Report: two-client FedAvg loop; the local-epoch helper sums the batch losses and returns the epoch average, which the server loop keeps in its history dict every round
# Shape: running_loss (a float bound before the batch loop) += loss without .item(): it becomes a tensor chained to every batch's loss; the helper returns it and train_fedavg appends it to history each round
# Expect: TML001 line 22
import copy

import torch
import torch.nn as nn
import torch.optim as optim


def local_epoch(model, loader, criterion, optimizer, device):
    model.train()
    running_loss, correct, total = 0.0, 0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        running_loss += loss  # expect: TML001
        correct += outputs.max(1)[1].eq(targets).sum().item()
        total += targets.size(0)
    return running_loss / len(loader), 100.0 * correct / total


def evaluate(model, loader, criterion, device):
    model.eval()
    running_loss, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            running_loss += criterion(outputs, targets).item()
            correct += outputs.max(1)[1].eq(targets).sum().item()
            total += targets.size(0)
    return running_loss / len(loader), 100.0 * correct / total


def average_models(model_a, model_b):
    merged = copy.deepcopy(model_a)
    with torch.no_grad():
        for p_avg, p_a, p_b in zip(merged.parameters(), model_a.parameters(), model_b.parameters()):
            p_avg.data = (p_a.data + p_b.data) / 2.0
    return merged


def train_fedavg(model_cls, loader_a, loader_b, test_loader, rounds=100, lr=0.1, device="cuda"):
    model_a = model_cls().to(device)
    model_b = model_cls().to(device)
    model_b.load_state_dict(model_a.state_dict())
    criterion = nn.CrossEntropyLoss()
    opt_a = optim.SGD(model_a.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    opt_b = optim.SGD(model_b.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    history = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    merged = None
    for rnd in range(rounds):
        loss_a, acc_a = local_epoch(model_a, loader_a, criterion, opt_a, device)
        loss_b, acc_b = local_epoch(model_b, loader_b, criterion, opt_b, device)
        merged = average_models(model_a, model_b)
        model_a.load_state_dict(merged.state_dict())
        model_b.load_state_dict(merged.state_dict())
        test_loss, test_acc = evaluate(merged, test_loader, criterion, device)
        history["train_loss"].append((loss_a + loss_b) / 2)
        history["train_acc"].append((acc_a + acc_b) / 2)
        history["test_loss"].append(test_loss)
        history["test_acc"].append(test_acc)
        print(f"round {rnd}: train {loss_a:.4f}/{loss_b:.4f} test {test_loss:.4f} acc {test_acc:.2f}")
    return merged, history
