# Source: https://github.com/hszhao/semseg/issues/60
# Report: "out of memory" after validation in each epoch; the suggested fix adds `with torch.no_grad():` before `output = model(input)` in the validate function.
# Shape: validate() sets eval mode and runs the model on every batch with autograd on, computing the loss and per-class intersection counts.
# Expect: TML003 line 20
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
        output = model(input)  # expect: TML003
        loss_sum += criterion(output, target).item()
        correct += int((output.argmax(1) == target).sum())
    return loss_sum, correct


val_loader = [(torch.randn(2, 3, 32, 32), torch.randint(0, 5, (2, 32, 32))) for _ in range(24)]
print(validate(val_loader))
