# Source: https://github.com/sharishi/start-ml/blob/19886d6be177bb3fa40bf172fafb9f1c4475a3d4/deeplearning/lesson4/ex9.py
# Report: audit of a test-time-augmentation helper: under inference_mode it appends every batch's logits (on the device) to a list, concatenates them per TTA pass and keeps all passes, so the whole test set's logits times the number of passes sit on the GPU
# Shape: predict_tta loops over augmentation passes, and for each pass over a randomly augmented test loader; per-batch model outputs go into a per-pass list and each pass's torch.cat result into an outer list stacked at the end
# Expect: TML004 line 39; TML004 line 40
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
            pred = model(x.to(device))
            prediction.append(pred)  # expect: TML004
        preds.append(torch.cat(prediction))  # expect: TML004
    probs = torch.stack(preds).softmax(dim=-1).mean(dim=0)
    return probs.argmax(dim=1).cpu()


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
