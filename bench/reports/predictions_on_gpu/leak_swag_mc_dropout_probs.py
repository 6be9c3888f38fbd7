# Source: https://github.com/wjmaddox/swa_gaussian/blob/aec6510233396292766827b89932cb150a5deeab/experiments/uncertainty/dropout_uncertainty.py
# Report: audited correct idiom: the SWAG repo's MC-dropout uncertainty script runs N stochastic passes over the test set under torch.no_grad() and adds each batch's softmax into a host numpy array via .cpu().numpy()
# Shape: rewrite in which the per-batch softmax outputs of every MC pass are appended to a list that lives across all N passes while still on the GPU, concatenated only at the end
# Expect: TML004 line 61
import argparse

import numpy as np
import torch
import torch.nn.functional as F
import tqdm

from swag import data, models

parser = argparse.ArgumentParser(description="MC dropout uncertainty")
parser.add_argument("--file", type=str, required=True, help="checkpoint")
parser.add_argument("--dataset", type=str, default="CIFAR10")
parser.add_argument("--data_path", type=str, default="/scratch/datasets/")
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--num_workers", type=int, default=4)
parser.add_argument("--model", type=str, default="VGG16Drop")
parser.add_argument("--save_path", type=str, required=True)
parser.add_argument("--N", type=int, default=20)
args = parser.parse_args()

eps = 1e-12
torch.backends.cudnn.benchmark = True

model_cfg = getattr(models, args.model)
loaders, num_classes = data.loaders(
    args.dataset,
    args.data_path,
    args.batch_size,
    args.num_workers,
    model_cfg.transform_train,
    model_cfg.transform_test,
    use_validation=False,
    shuffle_train=False,
)

model = model_cfg.base(*model_cfg.args, num_classes=num_classes, **model_cfg.kwargs)
model.cuda()
checkpoint = torch.load(args.file, map_location="cpu")
model.load_state_dict(checkpoint["state_dict"])


def train_dropout(m):
    if type(m) == torch.nn.modules.dropout.Dropout:
        m.train()


mc_probs = []
targets = []
with torch.no_grad():
    for i in range(args.N):
        print("%d/%d" % (i + 1, args.N))
        model.eval()
        model.apply(train_dropout)
        for input, target in tqdm.tqdm(loaders["test"]):
            input = input.cuda(non_blocking=True)
            output = model(input)
            mc_probs.append(F.softmax(output, dim=1))  # expect: TML004
            if i == 0:
                targets.append(target.numpy())

probs = torch.cat(mc_probs).view(args.N, -1, num_classes)
predictions = probs.mean(0).cpu().numpy()
targets = np.concatenate(targets)

entropies = -np.sum(np.log(predictions + eps) * predictions, axis=1)
np.savez(args.save_path, entropies=entropies, predictions=predictions, targets=targets)
