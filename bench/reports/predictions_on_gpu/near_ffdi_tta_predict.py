# Source: https://github.com/Odysseus96/Deepfake-FFDI-kaggle/blob/main/predict.py
# Report: the repository's TTA predictor: each pass over the test set runs under no_grad and moves every batch's softmax to host memory before keeping it
# Shape: test_pred outlives the batch loop, but each element is output.data.cpu().numpy(); the TTA sum is a numpy array; validate() feeds a device accuracy tensor computed under no_grad to an AverageMeter (no graph, no growth)
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from tqdm import tqdm


class AverageMeter(object):
    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def validate(val_loader, model, criterion, device):
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")
    roc_auc = AverageMeter("AUC", ":6.2f")
    model.eval()
    with torch.no_grad():
        for i, (input, target) in tqdm(enumerate(val_loader), total=len(val_loader)):
            input = input.to(device)
            target = target.to(device)
            output = model(input)
            loss = criterion(output, target)
            acc = (output.argmax(1).view(-1) == target.float().view(-1)).float().mean() * 100
            auc = roc_auc_score(target.view(-1).cpu().numpy(), output.argmax(1).view(-1).cpu().numpy()) * 100
            losses.update(loss.item(), input.size(0))
            top1.update(acc, input.size(0))
            roc_auc.update(auc, input.size(0))
    print(f"Val: Avg Loss {losses.avg:.4e} Avg Acc@1 {top1.avg:.3f} Avg AUC {roc_auc.avg:.3f}")
    return top1, roc_auc


def predict(test_loader, model, tta=10):
    # switch to evaluate mode; the loader's random transforms make each pass a different augmentation
    model.eval()
    test_pred_tta = None
    for _ in range(tta):
        test_pred = []
        with torch.no_grad():
            end = time.time()
            for i, (input, target) in tqdm(enumerate(test_loader), total=len(test_loader)):
                input = input.cuda()
                output = model(input)
                output = F.softmax(output, dim=1)
                output = output.data.cpu().numpy()
                test_pred.append(output)
        test_pred = np.vstack(test_pred)
        if test_pred_tta is None:
            test_pred_tta = test_pred
        else:
            test_pred_tta += test_pred
    return test_pred_tta


def submit_predict(model, test_loader, frame):
    model = model.cuda()
    model.eval()
    frame["y_pred"] = predict(test_loader, model, 1)[:, 1]
    frame[["img_name", "y_pred"]].to_csv("submit.csv", index=None)
