# Source: https://github.com/qiujunlin/Segmentation/blob/446f9ebce850ecb90f55d76ef9f07b0e9e1b5e91/1.py
# Report: val() runs under no_grad but appends every thresholded slice prediction and its CUDA label to two lists kept for the whole loader, stacking them on the GPU at the end to score Dice
# Shape: fixed: each slice mask and label is moved to the host before it is kept, so the lists grow in CPU memory and the stack after the loop happens on the CPU
# Expect: near-miss: must be silent
import argparse

import numpy as np
import torch
from tqdm import tqdm


def volume_scores(pred_cube, label_cube, target_class):
    pred = pred_cube.cpu().numpy().astype(np.int64)
    label = label_cube.cpu().numpy().astype(np.int64)
    assert pred.shape == label.shape
    acc = float((pred == label).mean())
    overlap = ((pred == target_class) & (label == target_class)).sum()
    union = (pred == target_class).sum() + (label == target_class).sum()
    dice = (2.0 * overlap + 0.1) / (union + 0.1)
    return dice, acc


def use_cuda(args):
    return args.use_gpu and torch.cuda.is_available()


def validate(args, model, dataloader):
    print("Start validation")
    slice_preds = []
    slice_labels = []
    seen = 0
    with torch.no_grad():
        model.eval()
        progress = tqdm(dataloader, desc="val")
        for image, (mask, n_slices) in progress:
            if use_cuda(args):
                image = image.cuda(non_blocking=True)
                mask = mask.cuda(non_blocking=True)
            probs = torch.sigmoid(model(image))
            binary = (probs > args.threshold).float()
            seen += binary.size(0)
            progress.set_postfix(slices=seen, total=int(n_slices[0]))
            slice_preds.append(binary.cpu())
            slice_labels.append(mask.cpu())

        pred_cube = torch.stack(slice_preds, dim=0).squeeze()
        label_cube = torch.stack(slice_labels, dim=0).squeeze()
        dice, acc = volume_scores(pred_cube, label_cube, args.num_classes)
    print(f"Dice: {dice:.4f}  Acc: {acc:.4f}")
    return dice, acc


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_gpu", action="store_true")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--num_classes", type=int, default=1)
    return parser.parse_args()
