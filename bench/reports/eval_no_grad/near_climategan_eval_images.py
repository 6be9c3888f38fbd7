# Source: https://github.com/cc-ai/climategan/issues/143
# Report: ClimateGAN trainer ran its per-epoch evaluation with grad enabled; the fix made run_evaluation a @torch.no_grad() method
# Shape: eval_images() still calls G's encoder/decoder in a loop, but its only caller run_evaluation() is decorated with @torch.no_grad(), so no graph is built
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


def accuracy(pred, target):
    return float((pred == target).mean())


def iou(pred, target):
    inter = np.logical_and(pred > 0, target > 0).sum()
    union = np.logical_or(pred > 0, target > 0).sum()
    return float(inter) / max(float(union), 1.0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU())
        self.decoders = nn.ModuleDict({"m": nn.Sequential(nn.Conv2d(32, 1, 1), nn.Sigmoid())})

    def encode(self, x):
        return self.encoder(x)


class Trainer:
    def __init__(self, display_images, comet_exp=None):
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.G = Generator().to(self.device)
        self.display_images = display_images
        self.exp = comet_exp
        self.global_step = 0

    def eval_mode(self):
        if self.G is not None:
            self.G.eval()

    def train_mode(self):
        if self.G is not None:
            self.G.train()

    def eval_images(self, mode, domain):
        metrics = {"accuracy": accuracy, "iou": iou}
        scores = {key: 0.0 for key in metrics}
        if domain == "rf":
            return scores
        for im_set in self.display_images[mode][domain]:
            x = im_set["data"]["x"].unsqueeze(0).to(self.device)
            m = im_set["data"]["m"].unsqueeze(0).detach().cpu().numpy()
            pred_mask = self.G.decoders["m"](self.G.encode(x)).detach().cpu().numpy()
            pred_mask[pred_mask > 0.5] = 1.0
            for key, fn in metrics.items():
                scores[key] += fn(pred_mask, m)
        if self.exp is not None:
            self.exp.log_metrics(scores, prefix=f"METRICS_{mode}", step=self.global_step)
        return scores

    @torch.no_grad()
    def run_evaluation(self, verbose=0):
        print("******************* Running Evaluation ***********************")
        self.eval_mode()
        for domain in ("r", "s"):
            self.eval_images("val", domain)
        self.train_mode()
        print("****************** Done *********************")
