# Source: https://github.com/ray-project/ray/issues/33423
# Report: Ray Tune segmentation trials died with OOM; eval_model gathered the whole test set's outputs before scoring, fixed by scoring batch by batch
# Shape: the fixed eval_model: prediction/label lists are re-created for every batch and only Python floats (mIoU, loss) outlive the batch
# Expect: near-miss: must be silent
import torch
from ray import tune
from ray.air import session


def miou(preds, labels, cls):
    inter = ((preds == cls) & (labels == cls)).sum().item()
    union = ((preds == cls) | (labels == cls)).sum().item()
    return inter / max(union, 1)


def eval_model(model, val_loader, loss_fn):
    model.eval()
    running_vloss = 0.0
    all_miou_bg = []
    all_miou_ar = []
    with torch.no_grad():
        for i, (inputs, labels) in enumerate(val_loader):
            val_preds = []
            val_labels = []
            inputs, labels = inputs.cuda(), labels.cuda()
            outputs = model(inputs.float())
            running_vloss += loss_fn(outputs, labels.long()).item()
            val_preds.append(outputs.argmax(dim=1))
            val_labels.append(labels)
            preds = torch.cat(val_preds)
            gts = torch.cat(val_labels)
            all_miou_bg.append(miou(preds, gts, 0))
            all_miou_ar.append(miou(preds, gts, 1))
    n = len(all_miou_bg)
    return running_vloss / (i + 1), sum(all_miou_bg) / n, sum(all_miou_ar) / n


def train_seg(config, build_model=None, loaders=None):
    model = build_model(config["width"]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    loss_fn = torch.nn.CrossEntropyLoss()
    train_loader, val_loader = loaders(config["batch_size"])
    for epoch in range(config["epochs"]):
        model.train()
        for inputs, labels in train_loader:
            opt.zero_grad()
            loss = loss_fn(model(inputs.cuda().float()), labels.cuda().long())
            loss.backward()
            opt.step()
        vloss, miou_bg, miou_ar = eval_model(model, val_loader, loss_fn)
        session.report({"val_loss": vloss, "miou_bg": miou_bg, "miou_ar": miou_ar})


search_space = {"lr": tune.loguniform(1e-5, 1e-2), "width": tune.choice([32, 64]),
                "batch_size": tune.choice([4, 8]), "epochs": 20}
