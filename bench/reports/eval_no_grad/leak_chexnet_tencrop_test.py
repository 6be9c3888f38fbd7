# Source: https://github.com/arnoweng/CheXNet/pull/39
# Report: CheXNet's test script runs "CUDA Error: out of memory" on Colab; the PR wraps the ten-crop evaluation loop in no_grad
# Shape: model.eval() then a forward per test batch with grad enabled (Variable volatile is a no-op); outputs and labels are grown with torch.cat every batch
# Expect: TML003 line 46; TML008 lines 43, 48
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

N_CLASSES = 14


class ChestNet(nn.Module):
    """DenseNet-like backbone with a sigmoid multi-label head."""

    def __init__(self, out_size):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 7, stride=2, padding=3),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.classifier = nn.Sequential(nn.Linear(32, out_size), nn.Sigmoid())

    def forward(self, x):
        return self.classifier(self.features(x))


def run_test(test_dataset, ckpt_path):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ChestNet(N_CLASSES).to(device)
    state = torch.load(ckpt_path, map_location=device)
    model.load_state_dict(state["state_dict"])

    loader = DataLoader(test_dataset, batch_size=1, shuffle=False, num_workers=0)

    gt = torch.FloatTensor().to(device)
    pred = torch.FloatTensor().to(device)

    model.eval()
    for i, (inp, target) in enumerate(loader):
        target = target.to(device)
        gt = torch.cat((gt, target), 0)  # expect: TML008
        bs, n_crops, c, h, w = inp.size()
        crops = torch.autograd.Variable(inp.view(-1, c, h, w).to(device))
        output = model(crops)  # expect: TML003
        output_mean = output.view(bs, n_crops, -1).mean(1)
        pred = torch.cat((pred, output_mean.data), 0)  # expect: TML008

    return gt.cpu().numpy(), pred.cpu().numpy()
