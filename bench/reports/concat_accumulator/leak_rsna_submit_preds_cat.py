# Source: https://github.com/manojsukhavasi/kaggle-rsna-pneumonia-detection-challenge/blob/42ee044d1b0132fc35d44751c00e9edf7cd04436/evaluate.py
# Report: audit of the RSNA pneumonia submission path: evaluate() starts from an empty CUDA tensor and re-concatenates the whole prediction matrix with each test batch inside the no_grad loop, so every step copies all earlier predictions again on the GPU
# Shape: a DenseNet with a class head and a box head returns a tuple; evaluate() grows `preds = torch.cat([preds, batch_preds])` per batch, and submit() turns the result into a CSV of prediction strings
# Expect: TML008 line 37
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
    preds = torch.empty(0, 5).cuda()
    with torch.no_grad():
        for _, images in enumerate(loader):
            label_p, box_p = model(images.cuda())
            preds = torch.cat([preds, torch.cat([label_p, box_p], dim=1)], dim=0)  # expect: TML008
    return preds


def submit(model, test_dataset, sample_csv, out_csv):
    loader = data.DataLoader(test_dataset, batch_size=64, shuffle=False, num_workers=4)
    preds = scale_boxes(evaluate(loader, model).cpu())
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
