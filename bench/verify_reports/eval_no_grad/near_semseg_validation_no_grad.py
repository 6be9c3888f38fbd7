# Source: https://github.com/hszhao/semseg/issues/60
# Report: the fix wraps the forward pass in torch.no_grad().
# Shape: the same validate() with the forward under no_grad.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(32, 5, 1)).to(device)
criterion = nn.CrossEntropyLoss()


def validate(val_loader):
    model.eval()
    loss_sum, correct = 0.0, 0
    for input, target in val_loader:
        input, target = input.to(device), target.to(device)
        with torch.no_grad():
            output = model(input)
        loss_sum += criterion(output, target).item()
        correct += int((output.argmax(1) == target).sum())
    return loss_sum, correct


val_loader = [(torch.randn(2, 3, 32, 32), torch.randint(0, 5, (2, 32, 32))) for _ in range(24)]
print(validate(val_loader))
