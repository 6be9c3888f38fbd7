# Source: https://github.com/pdrsa/dcc_week_2023/blob/2185db9afbabce1f2a51cd629dd59bbd976903dc/ecg_bib.py
# Report: audit of evaluate(): the repo's ECG evaluation is correct (labels and argmax predictions turned into Python lists via .cpu().numpy().tolist() under no_grad); this is the variant it avoided, keeping every batch's device tensors in lists until the end of the test set
# Shape: 12-lead ECG 1D-CNN classifier; train() with per-sample loss sums via .item(), evaluate() under torch.no_grad() appending the GPU label and prediction tensors, one torch.cat after the loop for classification_report
# Expect: TML004 line 64; TML004 line 65
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import classification_report
from tqdm import tqdm

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ECGConvClassifier(nn.Module):
    def __init__(self, num_classes=7, leads=12):
        super().__init__()
        chans = [leads, 32, 64, 128]
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv1d(c_in, c_out, 5, padding=2), nn.BatchNorm1d(c_out), nn.ReLU(), nn.MaxPool1d(2))
            for c_in, c_out in zip(chans[:-1], chans[1:])
        )
        self.fc1 = nn.LazyLinear(256)
        self.fc2 = nn.Linear(256, num_classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def train(model, train_loader, val_loader, optimizer, criterion, num_epochs, ckpt_dir):
    best_val = float("inf")
    for epoch in range(num_epochs):
        model.train()
        train_loss = 0.0
        for inputs, labels in tqdm(train_loader):
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            train_loss += loss.item() * inputs.size(0)
        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for inputs, labels in val_loader:
                inputs, labels = inputs.to(device), labels.to(device)
                val_loss += criterion(model(inputs), labels).item() * inputs.size(0)
        val_loss /= len(val_loader.dataset)
        print(f"epoch {epoch + 1}: train {train_loss / len(train_loader.dataset):.4f} val {val_loss:.4f}")
        if val_loss < best_val:
            best_val = val_loss
            torch.save(model.state_dict(), f"{ckpt_dir}/best_model.pth")


def evaluate(model, loader):
    model.eval()
    y_true, y_pred = [], []
    with torch.no_grad():
        for inputs, labels in tqdm(loader):
            inputs, labels = inputs.to(device), labels.to(device)
            outputs = model(inputs)
            _, preds = torch.max(outputs, 1)
            y_true.append(labels)  # expect: TML004
            y_pred.append(preds)  # expect: TML004
    y_true = torch.cat(y_true).cpu().numpy()
    y_pred = torch.cat(y_pred).cpu().numpy()
    return classification_report(y_true, y_pred, digits=4)
