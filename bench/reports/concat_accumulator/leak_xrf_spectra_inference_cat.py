# Source: https://github.com/dispink/xpt/blob/5a9a6bad1636054d4af59d29bde363372cb934ca/src/inference/inference.py
# Report: audit of an XRF-spectra transformer regressor: inference() starts from an empty GPU tensor and, for every batch of core-scanner spectra, rebinds predictions = torch.cat((predictions, outputs), 0), copying the whole accumulator on each step
# Shape: a no_grad inference helper grows a device tensor by concatenation inside the batch loop; a DeNormalize module and a predict script turn the result into CaCO3 / TOC wt%
# Expect: TML008 line 20
import torch
from torch import nn
from torch.utils.data import DataLoader


def inference(model: nn.Module, dataloader: DataLoader, device="cuda"):
    model.to(device)
    model.eval()
    # empty tensor that receives every batch's predictions
    predictions = torch.empty((0, 1)).to(device)

    with torch.no_grad():
        for samples in dataloader:
            samples = samples.to(device, non_blocking=True, dtype=torch.float)
            outputs = model(samples)
            predictions = torch.cat((predictions, outputs), 0)  # expect: TML008

    return predictions


class DeNormalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = mean
        self.std = std

    def forward(self, x):
        mean = self.mean.to(x.device)
        std = self.std.to(x.device)
        # wt% values live in [0, 100]
        return torch.clamp(std * x + mean, min=0, max=100)


def predict_target(model, dataset, target="CaCO3", batch_size=256, device="cuda"):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False,
                        num_workers=4, pin_memory=True)
    mean = torch.load(f"src/datas/xpt_{target}_target_mean.pth", map_location="cpu")
    std = torch.load(f"src/datas/xpt_{target}_target_std.pth", map_location="cpu")
    raw = inference(model, loader, device=device)
    wt_percent = DeNormalize(mean, std)(raw)
    return wt_percent.squeeze(1).cpu().numpy()


def predict_all(models, dataset, device="cuda"):
    results = {}
    for target, model in models.items():
        results[target] = predict_target(model, dataset, target=target, device=device)
        print(f"{target}: {len(results[target])} spectra, "
              f"mean {results[target].mean():.2f} wt%")
    return results
