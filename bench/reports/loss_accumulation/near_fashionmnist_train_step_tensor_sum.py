# Source: https://github.com/BlagojaBudzak/pytorch-cnn-fashionmnist/blob/10c55312b4f6c43c911c199eb5ce45305a0196ed/src/training.py
# Report: (fixed variant) the same course-style engine with train_step() summing loss.item(), so only Python floats outlive a batch; test_step() keeps its tensor sum, which is computed under torch.inference_mode() and holds no graph
# Shape: train_step/test_step helpers returning (loss, acc) tuples; the train sum takes .item(), the inference-mode test sum stays a tensor and is converted with float() by fit()
# Expect: near-miss: must be silent
import torch
from torch import nn
from tqdm.auto import tqdm

device = "cuda" if torch.cuda.is_available() else "cpu"


def accuracy_fn(y_true, y_pred):
    correct = torch.eq(y_true, y_pred).sum().item()
    return correct / len(y_pred) * 100


def train_step(model: nn.Module,
               data_loader: torch.utils.data.DataLoader,
               loss_fn: nn.Module,
               optimizer: torch.optim.Optimizer,
               accuracy_fn,
               device: torch.device = device):
    """One pass over the training batches; returns average loss and accuracy."""
    train_loss, train_acc = 0, 0
    model.train()
    for X, y in data_loader:
        X, y = X.to(device), y.to(device)
        logits = model(X)
        loss = loss_fn(logits, y)
        train_loss += loss.item()
        train_acc += accuracy_fn(y_true=y, y_pred=logits.argmax(dim=1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    train_loss /= len(data_loader)
    train_acc /= len(data_loader)
    return train_loss, train_acc


def test_step(model: nn.Module,
              data_loader: torch.utils.data.DataLoader,
              loss_fn: nn.Module,
              accuracy_fn,
              device: torch.device = device):
    test_loss, test_acc = 0, 0
    model.eval()
    with torch.inference_mode():
        for X, y in data_loader:
            X, y = X.to(device), y.to(device)
            test_logits = model(X)
            test_loss += loss_fn(test_logits, y)
            test_acc += accuracy_fn(y_true=y, y_pred=test_logits.argmax(dim=1))
        test_loss /= len(data_loader)
        test_acc /= len(data_loader)
    return test_loss, test_acc


def fit(model, train_loader, test_loader, epochs=10, lr=0.1):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    model.to(device)
    for epoch in tqdm(range(epochs)):
        tr_loss, tr_acc = train_step(model, train_loader, loss_fn, optimizer, accuracy_fn)
        te_loss, te_acc = test_step(model, test_loader, loss_fn, accuracy_fn)
        print(f"Epoch {epoch} | train loss {tr_loss:.4f} acc {tr_acc:.2f}% | test loss {te_loss:.4f} acc {te_acc:.2f}%")
        results["train_loss"].append(float(tr_loss))
        results["train_acc"].append(tr_acc)
        results["test_loss"].append(float(te_loss))
        results["test_acc"].append(te_acc)
    return results
