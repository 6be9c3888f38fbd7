# Source: https://github.com/23ksw10/kaggle/blob/bbb615eed40aed6e5f8b13292f6d1708f453130d/santander-customer-transaction-prediction/utils.py
# Report: Kaggle Santander solution: get_predictions runs the validation loader every epoch and returns plain Python lists for roc_auc_score
# Shape: forward under torch.no_grad, scores.tolist() / y.tolist() copy each batch to host lists, so nothing on the GPU outlives the batch
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from sklearn import metrics


class PerFeatureNet(nn.Module):
    def __init__(self, input_size, hidden_dim):
        super().__init__()
        self.bn = nn.BatchNorm1d(input_size)
        self.fc1 = nn.Linear(1, hidden_dim)
        self.fc2 = nn.Linear(input_size * hidden_dim, 1)

    def forward(self, x):
        n = x.shape[0]
        x = self.bn(x).view(-1, 1)
        x = F.relu(self.fc1(x)).reshape(n, -1)
        return torch.sigmoid(self.fc2(x)).view(-1)


def get_predictions(loader, model, device):
    model.eval()
    saved_preds = []
    true_labels = []
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device)
            y = y.to(device)
            scores = model(x)
            saved_preds += scores.tolist()
            true_labels += y.tolist()
    model.train()
    return saved_preds, true_labels


def fit(train_loader, val_loader, device, epochs=10):
    model = PerFeatureNet(input_size=200, hidden_dim=20).to(device)
    optimizer = optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-4)
    loss_fn = nn.BCELoss()
    for epoch in range(epochs):
        probability, true = get_predictions(val_loader, model, device)
        print(f"epoch {epoch} val ROC: {metrics.roc_auc_score(true, probability)}")
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            loss = loss_fn(model(data), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model
