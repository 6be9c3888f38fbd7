# Source: https://github.com/DavidCarlyn/fooling-feature-visualizations/blob/07f146a3c3f86ca0dcbf645bc87190db4dcf126e/count_silent_units.py
# Report: audited code: before running DDN/PGD/STR attacks on the CUB model, the script gathers the chosen validation samples by growing a CUDA batch with torch.cat((exs, ex), dim=0) inside the index loop
# Shape: kept as in the original: the accumulator `exs` starts as None and is re-concatenated with each new sample on every iteration, then the whole batch goes to the attack
# Expect: TML008 line 39
import os
from argparse import ArgumentParser

import torch
import torchvision.transforms as T

from attacks.overrides import ddn, pgd_linf, str_attack
from datasets.cub import CUB_Dataset
from models.utils import load_pretrained_model


def adv_transform():
    return T.Compose([T.CenterCrop((256, 256)), T.Resize((224, 224)), T.ToTensor()])


def get_args():
    parser = ArgumentParser()
    parser.add_argument("--train_data", type=str, required=True)
    parser.add_argument("--model", type=str, default="resnet18")
    parser.add_argument("--modeldir", type=str, default="data/models")
    parser.add_argument("--attack_sample_idxs", nargs="+", type=int, default=[7, 950, 1245, 3206, 4055])
    parser.add_argument("--attack_method", type=str, default="ddn")
    return parser.parse_args()


def gather_attack_batch(dset, idxs):
    exs = None
    lbls = []
    for idx in idxs:
        ex, lbl = dset[idx]
        ex = ex.unsqueeze(0).cuda()
        if exs is None:
            exs = ex
        else:
            exs = torch.cat((exs, ex), dim=0)  # expect: TML008
        lbls.append(lbl)
    return exs, torch.tensor(lbls).cuda()


if __name__ == "__main__":
    args = get_args()
    model = load_pretrained_model(args.model, num_classes=200).cuda()
    state = torch.load(os.path.join(args.modeldir, f"cub_{args.model}.pt"), map_location="cuda")
    model.load_state_dict(state)
    model.eval()

    val_dset = CUB_Dataset(args.train_data, split="val", transforms=adv_transform())
    exs, lbls = gather_attack_batch(val_dset, args.attack_sample_idxs)
    attacks = {"ddn": lambda: ddn(model=model, inputs=exs, labels=lbls, steps=300),
               "pgd": lambda: pgd_linf(model=model, inputs=exs, labels=lbls, steps=300, ε=0.2),
               "saa": lambda: str_attack(model=model, inputs=exs, labels=lbls)}
    adv_sample = attacks[args.attack_method]()

    with torch.no_grad():
        org_correct = (model(exs).argmax(dim=1) == lbls).int()
        adv_correct = (model(adv_sample).argmax(dim=1) == lbls).int()
    print(org_correct.tolist(), adv_correct.tolist())
