# Source: https://github.com/manojsukhavasi/kaggle-rsna-pneumonia-detection-challenge/blob/42ee044d1b0132fc35d44751c00e9edf7cd04436/evaluate.py
# Report: audit of the RSNA pneumonia submission path: evaluate() starts from an empty CUDA tensor and re-concatenates the whole prediction matrix with each test batch inside the no_grad loop, so every step copies all earlier predictions again on the GPU
# Shape: fixed: each batch's (class, box) pair is joined with a per-batch cat, moved to the CPU and appended to a list; the list is concatenated once after the loop
# Expect: near-miss: must be silent
import pandas as pd
import torch
import torch.nn as nn
from torch.utils import data
from torchvision import transforms


class BoxHeadNet(nn.Module):
    def __init__(self, backbone, feat_dim, nclasses=2, bbox_size=4):
        super().__init__()
        self.backbone = backbone
        self.cls = nn.Linear(feat_dim, nclasses)
        self.box = nn.Linear(feat_dim, bbox_size)

    def forward(self, x):
        feats = self.backbone(x).flatten(1)
        return self.cls(feats).softmax(dim=1)[:, 1:], torch.sigmoid(self.box(feats))


def scale_boxes(preds, width=1024, height=1024):
    out = preds.clone()
    out[:, 1::2] *= width
    out[:, 2::2] *= height
    return out


def evaluate(loader, model):
    model.eval()
    chunks = []
    with torch.no_grad():
        for _, images in enumerate(loader):
            label_p, box_p = model(images.cuda())
            chunks.append(torch.cat([label_p, box_p], dim=1).cpu())
    return torch.cat(chunks, dim=0) if chunks else torch.empty(0, 5)


def submit(model, test_dataset, sample_csv, out_csv):
    loader = data.DataLoader(test_dataset, batch_size=64, shuffle=False, num_workers=4)
    preds = scale_boxes(evaluate(loader, model))
    rows = []
    for p in preds.tolist():
        rows.append(" ".join(f"{v:.3f}" for v in p) if p[0] > 0.5 else "")
    df = pd.read_csv(sample_csv)
    df["PredictionString"] = rows
    df.to_csv(out_csv, index=False)


def main(backbone, feat_dim, test_dataset):
    model = BoxHeadNet(backbone, feat_dim).cuda()
    ckpt = torch.load("best_val_loss.pth.tar", map_location="cuda")
    model.load_state_dict(ckpt["state_dict"])
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    test_dataset.transform = tf
    submit(model, test_dataset, "data/stage_1_sample_submission.csv", "submission.csv")
