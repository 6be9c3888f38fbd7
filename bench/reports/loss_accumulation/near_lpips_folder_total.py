# Source: https://github.com/richzhang/PerceptualSimilarity/issues/87
# Report: computing LPIPS over a directory of image pairs ran out of CUDA memory because every pair's LPIPS graph was kept in the running total; scoring under no_grad with a Python float total fixes it
# Shape: same evaluation helper over image pairs, but the forward runs under torch.no_grad() and the total accumulates .item() floats
# Expect: near-miss: must be silent
import argparse
import os

import lpips
import torch


def list_pairs(pred_dir, gt_dir, exts=(".png", ".jpg")):
    names = sorted(n for n in os.listdir(pred_dir) if n.lower().endswith(exts))
    pairs = []
    for name in names:
        gt_path = os.path.join(gt_dir, name)
        if os.path.exists(gt_path):
            pairs.append((os.path.join(pred_dir, name), gt_path))
    return pairs


def build_metric(net="alex", use_gpu=True):
    loss_fn = lpips.LPIPS(net=net, version="0.1")
    if use_gpu:
        loss_fn = loss_fn.cuda()
    return loss_fn


def load_pair(pred_path, gt_path, use_gpu):
    p = lpips.im2tensor(lpips.load_image(pred_path))
    g = lpips.im2tensor(lpips.load_image(gt_path))
    if use_gpu:
        p = p.cuda()
        g = g.cuda()
    return p, g


def evaluate_lpips(pred_dir, gt_dir, net="alex", use_gpu=True):
    loss_fn = build_metric(net, use_gpu)
    pairs = list_pairs(pred_dir, gt_dir)
    mean_total = 0.0
    im_counter = 0
    for pred_path, gt_path in pairs:
        p, g = load_pair(pred_path, gt_path, use_gpu)
        with torch.no_grad():
            mean_total = mean_total + loss_fn.forward(g, p).mean().item()
        im_counter = im_counter + 1
        del p
        del g
    return mean_total / max(im_counter, 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pred_dir", required=True)
    parser.add_argument("--gt_dir", required=True)
    parser.add_argument("--net", default="alex")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    score = evaluate_lpips(args.pred_dir, args.gt_dir, args.net, not args.cpu)
    print(f"LPIPS ({args.net}): {score:.4f}")
