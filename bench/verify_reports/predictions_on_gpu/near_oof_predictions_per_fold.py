# Source: https://github.com/neptune-ai/open-solution-salt-identification/issues/82
# Report: the maintainer suggested dumping the predictions every iteration instead of keeping them on the device.
# Shape: the same folds keep the predictions on the host.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
test_images = torch.randn(64, 1, 16, 16, device=device)


@torch.no_grad()
def predict(model, images):
    return torch.sigmoid(model(images))


oof_predictions, test_predictions = [], []
for fold in range(24):
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1)).to(device)
    valid_images = torch.randn(32, 1, 16, 16, device=device)
    oof_predictions.append(predict(model, valid_images).cpu())
    test_predictions.append(predict(model, test_images).cpu())
print(torch.stack(test_predictions).mean(0).shape)
