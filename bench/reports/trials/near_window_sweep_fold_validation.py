# Source: https://github.com/sara-es/pcg-segmentation/blob/e87d0755459ac95e1749a03fe299c359943586c5/src/SegmentationCNN/Experiments/Window_Sizes/HyperParamInvestigation.py
# Report: audit of a heart-sound segmentation window/stride investigation (fixed): the per-epoch validation pass of every (window, stride) x fold trial ran after model.eval() without no_grad; here it is wrapped in torch.no_grad()
# Shape: same globals rebuilt per fold, same lists, early stop, results dict of .tolist() predictions and windows x folds sweep; only the validation loop sits under a no_grad block
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import ConcatDataset, DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_up_model(make_unet):
    global model, optimiser, criterion
    model = make_unet().to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()


def train(train_loader, val_loader, val_size, window, epochs=30, patience=5):
    avg_train, avg_val, accuracy = [], [], []
    best, bad_epochs, results = float("inf"), 0, {}
    for epoch in range(epochs):
        train_losses, val_losses, correct = [], [], 0
        model.train()
        for x, y, name, order in train_loader:
            optimiser.zero_grad()
            yhat = model(x[0].to(device))
            loss = criterion(yhat.t(), y[0].to(device))
            train_losses.append(loss.item())
            loss.backward()
            optimiser.step()
        model.eval()
        results = {}
        with torch.no_grad():
            for x, y, name, order in val_loader:
                z = model(x[0].to(device))
                target = y[0].to(device)
                val_losses.append(criterion(z.t(), target).item())
                states = F.softmax(z, dim=0).argmax(dim=0)
                correct += (states == target).sum().item()
                results.setdefault(name[0], []).append([states.tolist(), order])
        accuracy.append(correct / (val_size * window))
        avg_train.append(np.mean(train_losses))
        avg_val.append(np.mean(val_losses))
        if avg_val[-1] < best:
            best, bad_epochs = avg_val[-1], 0
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break
    return results, avg_train, avg_val, accuracy


def sweep(patients, murmur_labels, recordings_for, make_unet, windows=(64, 128), strides=(8, 16)):
    skf = StratifiedKFold(n_splits=5, shuffle=True, random_state=1)
    summary = {}
    for window, stride in zip(windows, strides):
        for fold, (tr, te) in enumerate(skf.split(patients, murmur_labels), start=1):
            train_set = ConcatDataset(recordings_for(patients[tr], window, stride))
            val_set = ConcatDataset(recordings_for(patients[te], window, stride))
            set_up_model(make_unet)
            _, _, val_curve, acc = train(DataLoader(train_set, batch_size=1, shuffle=True),
                                         DataLoader(val_set, batch_size=1), len(val_set), window)
            summary[(window, stride, fold)] = (min(val_curve), max(acc))
            torch.save(model.state_dict(), f"env_cnn_{window}_{stride}_{fold}.pt")
    return summary
