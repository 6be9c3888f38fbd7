# Source: https://github.com/gimme1dollar/dacon_artist_classification/blob/51549f0192c7fae16a96cdd9e22fff980bccc93c/train.py
# Report: Dacon artist-classification baseline; the repository's validation() converts each batch with .detach().cpu().numpy().tolist(), this variant keeps the per-batch class tensors and labels in lists and concatenates them once after the loop
# Shape: under no_grad nothing is graph-attached, but model_pred.argmax(1) and the label batch are CUDA tensors appended to lists that live for the whole validation pass, so the GPU holds every batch until torch.cat(...).cpu() at the end (inference() still uses .tolist() and stays clean)
# Expect: TML004 lines 46, 47
import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import f1_score
from tqdm.auto import tqdm


def competition_metric(true, pred):
    return f1_score(true, pred, average="macro")


def train(model, optimizer, train_loader, test_loader, device, epochs):
    model.to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    best_score, best_model = 0, None
    for epoch in range(1, epochs + 1):
        model.train()
        train_loss = []
        for img, label in tqdm(iter(train_loader)):
            img, label = img.float().to(device), label.to(device)
            optimizer.zero_grad()
            loss = criterion(model(img), label)
            loss.backward()
            optimizer.step()
            train_loss.append(loss.item())
        val_loss, val_score = validation(model, criterion, test_loader, device)
        print(f"Epoch [{epoch}], Train Loss : [{np.mean(train_loss):.5f}] Val Loss : [{val_loss:.5f}] Val F1 : [{val_score:.5f}]")
        if best_score < val_score:
            best_model, best_score = model, val_score
    return best_model


def validation(model, criterion, test_loader, device):
    model.eval()
    model_preds, true_labels, val_loss = [], [], []
    with torch.no_grad():
        for img, label in tqdm(iter(test_loader)):
            img, label = img.float().to(device), label.to(device)
            model_pred = model(img)
            loss = criterion(model_pred, label)
            val_loss.append(loss.item())
            model_preds.append(model_pred.argmax(1))  # expect: TML004
            true_labels.append(label)  # expect: TML004
    model_preds = torch.cat(model_preds).cpu().numpy()
    true_labels = torch.cat(true_labels).cpu().numpy()
    return np.mean(val_loss), competition_metric(true_labels, model_preds)


def inference(model, test_loader, device):
    model.to(device)
    model.eval()
    model_preds = []
    with torch.no_grad():
        for img in tqdm(iter(test_loader)):
            img = img.float().to(device)
            model_pred = model(img)
            model_preds += model_pred.argmax(1).detach().cpu().numpy().tolist()
    return model_preds
