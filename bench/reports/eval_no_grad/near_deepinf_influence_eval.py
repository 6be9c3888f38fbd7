# Source: https://github.com/yuoo655/DeepInf/blob/71991755cb0de978ccca38583278b81425f0d495/evaluate.py
# Report: audit: evaluate() switches the GAT/GCN influence model to eval() and runs the whole valid/test loader without no_grad, saving a full autograd graph per batch; fixed here with the decorator form
# Shape: same module-level model and evaluate(epoch, loader); the function is decorated with @torch.no_grad(), so the forward inside the loop records nothing; loss and scores are still read out with .item() and .data.tolist()
# Expect: near-miss: must be silent
import argparse
import logging

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import precision_recall_curve, precision_recall_fscore_support, roc_auc_score
from torch.utils.tensorboard import SummaryWriter

from gat import BatchGAT

logger = logging.getLogger(__name__)
parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--model", default="gat")
args = parser.parse_args()

model = BatchGAT(pretrained_emb=np.load("embedding.npy"), vertex_feature=np.load("vertex_feature.npy"))
class_weight = torch.tensor([1.0, 3.0])
if args.cuda:
    model.cuda()
    class_weight = class_weight.cuda()
writer = SummaryWriter("runs/deepinf")


@torch.no_grad()
def evaluate(epoch, loader, thr=None, return_best_thr=False, log_desc="valid_"):
    model.eval()
    total, loss = 0.0, 0.0
    y_true, y_pred, y_score = [], [], []
    for graph, features, labels, vertices in loader:
        bs = graph.size(0)
        if args.cuda:
            graph, features = graph.cuda(), features.cuda()
            labels, vertices = labels.cuda(), vertices.cuda()
        output = model(features, vertices, graph)
        if args.model in ("gcn", "gat"):
            output = output[:, -1, :]
        loss_batch = F.nll_loss(output, labels, class_weight)
        loss += bs * loss_batch.item()
        y_true += labels.data.tolist()
        y_pred += output.max(1)[1].data.tolist()
        y_score += output[:, 1].data.tolist()
        total += bs
    model.train()

    if thr is not None:
        y_pred = (np.array(y_score) > thr).astype(int)
    prec, rec, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="binary")
    auc = roc_auc_score(y_true, y_score)
    logger.info("%sloss: %.4f AUC: %.4f Prec: %.4f Rec: %.4f F1: %.4f", log_desc, loss / total, auc, prec, rec, f1)
    for name, value in (("loss", loss / total), ("auc", auc), ("prec", prec), ("rec", rec), ("f1", f1)):
        writer.add_scalar(log_desc + name, value, epoch + 1)

    if return_best_thr:
        precs, recs, thrs = precision_recall_curve(y_true, y_score)
        f1s = (2 * precs * recs / (precs + recs))[:-1]
        keep = ~np.isnan(f1s)
        return thrs[keep][np.argmax(f1s[keep])]
    return None
