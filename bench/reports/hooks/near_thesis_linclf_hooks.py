# Source: https://github.com/alexgabriel28/thesis/blob/aaf7d02d25c8db952dbb59100651804e8edadc0d/thesis/models/eval.py
# Report: fixed linear-probe evaluation: hooks registered once and removed, a real no_grad context, per-batch features moved to the CPU and concatenated once
# Shape: the two handles are kept and .remove()d after the loops; appends are .cpu() copies made under no_grad; torch.cat runs once after each loop
# Expect: near-miss: must be silent
import numpy as np
import torch
from sklearn.neighbors import KNeighborsClassifier


def set_parameter_requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad = flag


def cal_linclf_acc(model, train_dataloader, test_dataloader, clf=None):
    clf = clf or KNeighborsClassifier()
    set_parameter_requires_grad(model, False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.eval()
    model.to(device)

    activation = {}

    def get_activation(name):
        def hook(module, inp, output):
            activation[name] = output.detach()
        return hook

    handles = [
        model.backbone_1.fc.register_forward_hook(get_activation("fc_1")),
        model.backbone_2.fc.register_forward_hook(get_activation("fc_2")),
    ]
    feats = {}
    with torch.no_grad():
        for split, loader in (("train", train_dataloader), ("test", test_dataloader)):
            outs, labels = [], []
            for data, data_2, label in loader:
                data = data.to(device).float()
                data_2 = data_2.to(device).float()
                _ = model(data, data_2).squeeze()

                a = activation["fc_1"]
                b = activation["fc_2"]
                outs.append(torch.cat((a, b), 1).cpu())
                labels.append(label.cpu())
            feats[split] = (torch.cat(outs, 0).numpy(), torch.cat(labels, 0).numpy())
    for h in handles:
        h.remove()

    x_tr, y_tr = feats["train"]
    x_te, y_te = feats["test"]
    clf.fit(x_tr, y_tr)
    pred = clf.predict(x_te)
    return float(np.mean(pred == y_te))
