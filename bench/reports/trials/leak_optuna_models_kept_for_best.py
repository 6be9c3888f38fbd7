# Source: https://github.com/optuna/optuna/issues/1224
# Report: with PyTorch, a study hit CUDA out of memory after a few dozen trials (trial 28 failed with 9.77 GiB already allocated); several users reported the same memory piling up across trials.
# Shape: every trial builds a CUDA model and optimizer, and the objective keeps each trained model in a module-level dict to pick the best one after the study.
# Expect: TML004 line 34
import optuna
import torch
import torch.nn as nn

trained_models = {}


def build_model(trial):
    width = trial.suggest_int("width", 64, 1024, log=True)
    depth = trial.suggest_int("depth", 1, 4)
    layers, in_features = [], 784
    for _ in range(depth):
        layers += [nn.Linear(in_features, width), nn.ReLU()]
        in_features = width
    return nn.Sequential(*layers, nn.Linear(in_features, 10))


def objective(trial, train_loader, val_loader):
    model = build_model(trial).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-2, log=True))
    for x, y in train_loader:
        loss = nn.functional.cross_entropy(model(x.cuda().flatten(1)), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x.cuda().flatten(1)).argmax(1) == y.cuda()).sum().item()
    trained_models[trial.number] = model  # expect: TML004
    return correct / len(val_loader.dataset)


def search(train_loader, val_loader):
    study = optuna.create_study(direction="maximize")
    study.optimize(lambda t: objective(t, train_loader, val_loader), n_trials=100)
    return trained_models[study.best_trial.number]
