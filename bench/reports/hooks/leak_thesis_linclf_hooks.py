# Source: https://github.com/alexgabriel28/thesis/blob/aaf7d02d25c8db952dbb59100651804e8edadc0d/thesis/models/eval.py
# Report: linear-probe evaluation registers two forward hooks on the persistent backbone every batch, calls torch.no_grad() as a bare statement and grows GPU accumulators with torch.cat
# Shape: hooks via a get_activation() closure factory are registered per batch and never removed; the intended no_grad is a thrown-away object; outs/labels are re-concatenated each batch
# Expect: TML007 lines 38, 39; TML014 line 37; TML003 line 40; TML008 lines 44, 45
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

    feats = {}
    for split, loader in (("train", train_dataloader), ("test", test_dataloader)):
        outs = torch.Tensor().to(device)
        labels = torch.Tensor().to(device)
        for data, data_2, label in loader:
            data = data.to(device).float()
            data_2 = data_2.to(device).float()
            label = label.to(device)
            torch.no_grad()  # expect: TML014
            model.backbone_1.fc.register_forward_hook(get_activation("fc_1"))  # expect: TML007
            model.backbone_2.fc.register_forward_hook(get_activation("fc_2"))  # expect: TML007
            _ = model(data, data_2).squeeze()  # expect: TML003

            a = activation["fc_1"]
            b = activation["fc_2"]
            outs = torch.cat((outs, torch.cat((a, b), 1)), 0)  # expect: TML008
            labels = torch.cat((labels, label), 0)  # expect: TML008
        feats[split] = (outs.detach().cpu().numpy(), labels.detach().cpu().numpy())

    x_tr, y_tr = feats["train"]
    x_te, y_te = feats["test"]
    clf.fit(x_tr, y_tr)
    pred = clf.predict(x_te)
    return float(np.mean(pred == y_te))
