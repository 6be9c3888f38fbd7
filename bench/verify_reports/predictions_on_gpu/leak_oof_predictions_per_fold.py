# Source: https://github.com/neptune-ai/open-solution-salt-identification/issues/82
# Report: memory grew by about 3 GB after each cross-validation fold; the out-of-fold predictions on train and test are appended to lists to be averaged later.
# Shape: out-of-fold and test predictions come back as device tensors from a predict helper decorated with no_grad; the fold loop keeps them in lists.
# Expect: TML004 lines 22, 23
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
    oof_predictions.append(predict(model, valid_images))  # expect: TML004
    test_predictions.append(predict(model, test_images))  # expect: TML004
print(torch.stack(test_predictions).mean(0).shape)
