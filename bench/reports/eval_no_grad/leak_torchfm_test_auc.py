# Source: https://github.com/rixwew/pytorch-fm/blob/master/examples/main.py
# Report: pytorch-fm example runner: variant of test() without the torch.no_grad() block (model.eval() only)
# Shape: model.eval() does not disable autograd: every validation batch builds and holds a graph for a backward that never comes (peak); .tolist() keeps nothing on the GPU, so there is no growth
# Expect: TML003 line 59
import numpy as np
import torch
import tqdm
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader


class FeaturesLinear(torch.nn.Module):
    def __init__(self, field_dims):
        super().__init__()
        self.fc = torch.nn.Embedding(sum(field_dims), 1)
        self.bias = torch.nn.Parameter(torch.zeros((1,)))
        self.register_buffer("offsets", torch.as_tensor(np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)))

    def forward(self, x):
        return torch.sum(self.fc(x + self.offsets.unsqueeze(0)), dim=1) + self.bias


class FactorizationMachineModel(torch.nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.linear = FeaturesLinear(field_dims)
        self.embedding = torch.nn.Embedding(sum(field_dims), embed_dim)
        self.register_buffer("offsets", torch.as_tensor(np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)))

    def forward(self, x):
        emb = self.embedding(x + self.offsets.unsqueeze(0))
        square_of_sum = torch.sum(emb, dim=1) ** 2
        sum_of_square = torch.sum(emb ** 2, dim=1)
        interaction = 0.5 * torch.sum(square_of_sum - sum_of_square, dim=1, keepdim=True)
        return torch.sigmoid((self.linear(x) + interaction).squeeze(1))


def train(model, optimizer, data_loader, criterion, device, log_interval=1000):
    model.train()
    total_loss = 0
    for i, (fields, target) in enumerate(tqdm.tqdm(data_loader, smoothing=0, mininterval=1.0)):
        fields, target = fields.to(device), target.to(device)
        y = model(fields)
        loss = criterion(y, target.float())
        model.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        if (i + 1) % log_interval == 0:
            print("    - loss:", total_loss / log_interval)
            total_loss = 0


def test(model, data_loader, device):
    model.eval()
    targets, predicts = list(), list()
    for fields, target in tqdm.tqdm(data_loader, smoothing=0, mininterval=1.0):
        fields, target = fields.to(device), target.to(device)
        y = model(fields)  # expect: TML003
        targets.extend(target.tolist())
        predicts.extend(y.tolist())
    return roc_auc_score(targets, predicts)


def main(dataset, field_dims, epochs=15, lr=1e-3, batch_size=2048, weight_decay=1e-6, device="cuda:0"):
    device = torch.device(device)
    n_train = int(len(dataset) * 0.8)
    n_valid = int(len(dataset) * 0.1)
    train_set, valid_set, test_set = torch.utils.data.random_split(
        dataset, (n_train, n_valid, len(dataset) - n_train - n_valid))
    train_loader = DataLoader(train_set, batch_size=batch_size, num_workers=8)
    valid_loader = DataLoader(valid_set, batch_size=batch_size, num_workers=8)
    test_loader = DataLoader(test_set, batch_size=batch_size, num_workers=8)
    model = FactorizationMachineModel(field_dims, embed_dim=16).to(device)
    criterion = torch.nn.BCELoss()
    optimizer = torch.optim.Adam(params=model.parameters(), lr=lr, weight_decay=weight_decay)
    for epoch_i in range(epochs):
        train(model, optimizer, train_loader, criterion, device)
        auc = test(model, valid_loader, device)
        print("epoch:", epoch_i, "validation: auc:", auc)
    print("test auc:", test(model, test_loader, device))
