# Source: https://github.com/optuna/optuna/issues/1224
# Report: with PyTorch, a study hit CUDA out of memory after a few dozen trials; users reported memory piling up across trials.
# Shape: every trial builds a model and optimizer on the device, and the objective keeps each trained model in a module-level dict to pick the best one after the study.
# Expect: TML004 line 22
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
x, y = torch.randn(64, 16, device=device), torch.randn(64, 1, device=device)
trained_models = {}


def objective(trial_number, width):
    model = nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    trained_models[trial_number] = model  # expect: TML004
    return loss.item()


scores = []
for trial_number in range(24):
    scores.append(objective(trial_number, width=32 + trial_number % 4 * 16))
print(min(scores))
