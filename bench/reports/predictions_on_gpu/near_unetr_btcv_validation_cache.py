# Source: https://github.com/hasukmin12/my_code/blob/3430373d0ab6229d4be2c4dd34a315cfaf3d5564/test3.py
# Report: audited idiom (MONAI UNETR/BTCV-style validation): sliding-window inference under torch.no_grad(), dice_metric.aggregate().item() appended per case, metric reset after the loop; this rewrite also caches every case's prediction and label for a later per-case HD95 pass
# Shape: the same caches are filled before the loop ends, but with .cpu() copies made under no_grad: GPU memory stays flat and the HD95 pass runs on host tensors
# Expect: near-miss: must be silent
import numpy as np
import torch
from monai.data import decollate_batch
from monai.inferers import sliding_window_inference
from monai.metrics import DiceMetric, HausdorffDistanceMetric
from monai.transforms import AsDiscrete

post_label = AsDiscrete(to_onehot=14)
post_pred = AsDiscrete(argmax=True, to_onehot=14)
dice_metric = DiceMetric(include_background=True, reduction="mean", get_not_nans=False)
hd_metric = HausdorffDistanceMetric(include_background=False, percentile=95)


def per_case_hd95(pred_cache, label_cache):
    scores = []
    for pred, label in zip(pred_cache, label_cache):
        pred_convert = [post_pred(p) for p in decollate_batch(pred)]
        label_convert = [post_label(l) for l in decollate_batch(label)]
        hd_metric(y_pred=pred_convert, y=label_convert)
        scores.append(hd_metric.aggregate().item())
        hd_metric.reset()
    return float(np.mean(scores))


def validation(model, epoch_iterator_val, global_step):
    model.eval()
    dice_vals = list()
    pred_cache, label_cache = [], []
    with torch.no_grad():
        for step, batch in enumerate(epoch_iterator_val):
            val_inputs, val_labels = (batch["image"].cuda(), batch["label"].cuda())
            val_outputs = sliding_window_inference(val_inputs, (96, 96, 96), 4, model)

            val_labels_list = decollate_batch(val_labels)
            val_labels_convert = [post_label(t) for t in val_labels_list]
            val_outputs_list = decollate_batch(val_outputs)
            val_output_convert = [post_pred(t) for t in val_outputs_list]

            pred_cache.append(val_outputs.cpu())
            label_cache.append(val_labels.cpu())

            dice_metric(y_pred=val_output_convert, y=val_labels_convert)
            dice = dice_metric.aggregate().item()
            dice_vals.append(dice)
            epoch_iterator_val.set_description(
                "Validate (%d / %d Steps) (dice=%2.5f)" % (global_step, 10.0, dice)
            )
        dice_metric.reset()
    mean_dice_val = np.mean(dice_vals)
    mean_hd95_val = per_case_hd95(pred_cache, label_cache)
    return mean_dice_val, mean_hd95_val
