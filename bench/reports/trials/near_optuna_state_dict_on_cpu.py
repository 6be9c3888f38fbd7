# Source: https://optuna.readthedocs.io/en/stable/faq.html#how-do-i-avoid-running-out-of-memory-oom-when-optimizing-studies
# Report: the Optuna FAQ on running out of memory across trials: do not keep per-trial objects alive (gc_after_trial helps only with what is unreachable).
# Shape: each trial still builds a CUDA model, but only the best weights are kept, copied to CPU, and the model dies with the trial.
# Expect: near-miss: must be silent
import optuna
import torch
import torch.nn as nn

best = {"score": -1.0, "state": None}


def build_model(trial):
    width = trial.suggest_int("width", 64, 1024, log=True)
    return nn.Sequential(nn.Linear(784, width), nn.ReLU(), nn.Linear(width, 10))


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
    score = correct / len(val_loader.dataset)
    if score > best["score"]:
        best["score"] = score
        best["state"] = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    return score


def search(train_loader, val_loader):
    study = optuna.create_study(direction="maximize")
    study.optimize(lambda t: objective(t, train_loader, val_loader), n_trials=100, gc_after_trial=True)
    return best["state"]
