# Source: https://github.com/sharishi/start-ml/blob/19886d6be177bb3fa40bf172fafb9f1c4475a3d4/deeplearning/lesson4/ex9.py
# Report: audit of a test-time-augmentation helper that keeps every pass's device logits for the whole test set; rewritten as the fix: each batch's output is moved to the CPU before it is kept
# Shape: same two-level TTA loop under inference_mode; per-batch outputs are copied with .cpu(), per-pass results are vstacked on the host and stacked once after the loop
# Expect: near-miss: must be silent
import csv

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from PIL import Image


class TestImages(Dataset):
    def __init__(self, paths, augment=True):
        self.paths = paths
        aug = [transforms.RandomHorizontalFlip(), transforms.RandomResizedCrop(224, scale=(0.8, 1.0))]
        base = [transforms.Resize(256), transforms.CenterCrop(224)]
        self.tf = transforms.Compose((aug if augment else base) + [
            transforms.ToTensor(),
            transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        ])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        return self.tf(Image.open(self.paths[idx]).convert("RGB")), idx


@torch.inference_mode()
def predict_tta(model: nn.Module, loader: DataLoader, device: torch.device, iterations: int = 4):
    model.eval()
    preds = []
    for _ in range(iterations):
        prediction = []
        for x, _idx in loader:
            pred = model(x.to(device)).cpu()
            prediction.append(pred)
        preds.append(torch.vstack(prediction))
    probs = torch.stack(preds).softmax(dim=-1).mean(dim=0)
    return probs.argmax(dim=1)


def write_submission(paths, labels, class_names, out_csv):
    with open(out_csv, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image", "label"])
        for path, label in zip(paths, labels.tolist()):
            writer.writerow([path, class_names[label]])


def run(model, paths, class_names, out_csv="submission.csv", device="cuda", tta=4):
    model = model.to(device)
    loader = DataLoader(TestImages(paths, augment=tta > 1), batch_size=64, shuffle=False,
                        num_workers=4, pin_memory=True)
    labels = predict_tta(model, loader, torch.device(device), iterations=tta)
    write_submission(paths, labels, class_names, out_csv)
    return labels
