# Source: https://github.com/wjmaddox/swa_gaussian/blob/aec6510233396292766827b89932cb150a5deeab/experiments/uncertainty/dropout_uncertainty.py
# Report: audited correct idiom: the SWAG repo's MC-dropout uncertainty script runs N stochastic passes over the test set under torch.no_grad() and adds each batch's softmax into a host numpy array via .cpu().numpy()
# Shape: same script as the original: each pass's softmax is moved off the GPU (.cpu().numpy()) and summed into a preallocated numpy array; nothing device-side outlives a batch
# Expect: near-miss: must be silent
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


predictions = np.zeros((len(loaders["test"].dataset), num_classes))
targets = np.zeros(len(loaders["test"].dataset))
with torch.no_grad():
    for i in range(args.N):
        print("%d/%d" % (i + 1, args.N))
        model.eval()
        model.apply(train_dropout)
        k = 0
        for input, target in tqdm.tqdm(loaders["test"]):
            input = input.cuda(non_blocking=True)
            output = model(input)
            predictions[k : k + input.size(0)] += F.softmax(output, dim=1).cpu().numpy()
            targets[k : k + target.size(0)] = target.numpy()
            k += input.size(0)
predictions /= args.N

entropies = -np.sum(np.log(predictions + eps) * predictions, axis=1)
np.savez(args.save_path, entropies=entropies, predictions=predictions, targets=targets)
