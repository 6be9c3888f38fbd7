# Source: https://github.com/RookieLinLucy666/Empirical_Study/blob/69098189572c5213d285b623b252db698de9b26b/FL_base.py
# Report: audit of a federated-unlearning trainer: Retain_Train's rapid-retrain path gives each client an AdaHessian optimizer and calls loss.backward(create_graph=True), never resetting p.grad to None, while every round's client models are kept on the GPU in all_client_models
# Shape: same retain_train()/train_client() flow, but right after each AdaHessian step the client resets every p.grad to None (as PyTorch's create_graph warning advises), so no kept client model holds a double-backward graph
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn as nn
import torch_optimizer as torch_optim


def fedavg(local_models, device):
    global_model = copy.deepcopy(local_models[0])
    avg_state = global_model.state_dict()
    local_states = [m.state_dict() for m in local_models]
    for key in avg_state:
        avg_state[key] = torch.zeros_like(avg_state[key], dtype=torch.float32, device=device)
        for state in local_states:
            avg_state[key] += state[key].float().to(device)
        avg_state[key] /= len(local_models)
    global_model.load_state_dict(avg_state)
    return global_model


@torch.no_grad()
def test(model, loader, device):
    model.eval()
    correct, seen = 0, 0
    for data, target in loader:
        pred = model(data.to(device)).argmax(dim=1)
        correct += (pred == target.to(device)).sum().item()
        seen += target.numel()
    return correct / max(seen, 1)


def train_client(model, loader, params, device):
    optimizer = torch_optim.Adahessian(model.parameters(), lr=params["local_lr"])
    criterion = nn.CrossEntropyLoss()
    model.to(device)
    model.train()
    for _ in range(params["local_epoch"]):
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            # AdaHessian needs a differentiable gradient for its Hutchinson trace
            loss.backward(create_graph=True)
            optimizer.step()
            for p in model.parameters():
                p.grad = None
    return model


def retain_train(init_global_model, client_loaders, test_loader, params, device="cuda"):
    all_global_models = [copy.deepcopy(init_global_model)]
    all_client_models = []
    for rnd in range(params["global_epoch"]):
        client_models = []
        for loader in client_loaders:
            local = copy.deepcopy(all_global_models[-1])
            client_models.append(train_client(local, loader, params, device))
        all_client_models += client_models
        global_model = fedavg(client_models, device)
        acc = test(global_model, test_loader, device)
        print(f"round {rnd}: global acc {acc:.4f}")
        all_global_models.append(copy.deepcopy(global_model))
    return all_global_models, all_client_models
