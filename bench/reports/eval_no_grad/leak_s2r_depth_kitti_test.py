# Source: https://github.com/microsoft/S2R-DepthNet/issues/13
# Report: test.py runs out of CUDA memory on KITTI; the test loop runs four networks after .eval() with autograd still on and only detaches the prediction when converting it to numpy
# Shape: evaluation loop over the test loader after .eval() with no grad-disabled context: every network call records activations for a backward that never comes
# Expect: TML003 lines 76, 77, 78, 80
import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

from models import modules
import DSAModules
import loaddata

parser = argparse.ArgumentParser(description="S2R-DepthNet test")
parser.add_argument("--root", type=str, default="")
parser.add_argument("--test_datafile", type=str, default="")
parser.add_argument("--batchSize", type=int, default=1)
parser.add_argument("--out_dir", type=str, default="out")
parser.add_argument("--encoder_path", type=str, default="")
parser.add_argument("--decoder_path", type=str, default="")
parser.add_argument("--depthnet_path", type=str, default="")
parser.add_argument("--dsa_path", type=str, default="")


def kitti_metrics(pred, gt, min_depth=1e-3, max_depth=80.0):
    pred = np.clip(np.squeeze(pred), min_depth, max_depth)
    gt = np.squeeze(gt)
    mask = np.logical_and(gt > min_depth, gt < max_depth)
    h, w = gt.shape
    crop = np.zeros(mask.shape, dtype=bool)
    crop[int(0.408 * h):int(0.992 * h), int(0.036 * w):int(0.964 * w)] = True
    mask = np.logical_and(mask, crop)
    pred = pred * (np.median(gt[mask]) / np.median(pred[mask]))
    pred, gt = pred[mask], gt[mask]
    thresh = np.maximum(gt / pred, pred / gt)
    rmse = np.sqrt(((gt - pred) ** 2).mean())
    abs_rel = np.mean(np.abs(gt - pred) / gt)
    return [abs_rel, rmse, (thresh < 1.25).mean()]


def load_weights(net, path):
    net.load_state_dict(torch.load(path, map_location="cpu"))
    return net


def main():
    args = parser.parse_args()
    loader = loaddata.create_test_dataloader(dataset="KITTI", root=args.root,
                                             data_file=args.test_datafile,
                                             batchsize=args.batchSize, nThreads=8)

    encoder = modules.Struct_Encoder(n_downsample=2, n_res=4, input_dim=3, dim=64,
                                     norm="in", activ="lrelu", pad_type="reflect").cuda()
    decoder = torch.nn.DataParallel(modules.Struct_Decoder()).cuda()
    dsa = torch.nn.DataParallel(DSAModules.AutoED(DSAModules.drn_d_22(pretrained=True))).cuda()
    depth_net = torch.nn.DataParallel(modules.Depth_Net()).cuda()

    load_weights(encoder, args.encoder_path)
    load_weights(decoder, args.decoder_path)
    load_weights(dsa, args.dsa_path)
    load_weights(depth_net, args.depthnet_path)
    os.makedirs(args.out_dir, exist_ok=True)

    encoder.eval()
    decoder.eval()
    dsa.eval()
    depth_net.eval()

    result_log = [[] for _ in range(3)]
    for step, batch in enumerate(loader):
        image = batch["left_img"].cuda()
        depth = batch["depth"].cuda()

        struct_code = encoder(image)  # expect: TML003
        structure_map = decoder(struct_code)  # expect: TML003
        attention_map = dsa(image)  # expect: TML003
        depth_specific = attention_map * structure_map
        pred = depth_net(depth_specific)  # expect: TML003
        pred = F.interpolate(pred[-1], size=[depth.size(1), depth.size(2)],
                             mode="bilinear", align_corners=True)

        pred_np = np.squeeze(pred.cpu().detach().numpy())
        gt_np = np.squeeze(depth.cpu().numpy())
        pred_np = (pred_np + 1.0) / 2.0 * 80.0

        for i, item in enumerate(kitti_metrics(pred_np, gt_np)):
            result_log[i].append(item)

    with open(os.path.join(args.out_dir, "evalog.txt"), "w") as f:
        f.write("abs_rel, rmse, a1\n")
        f.write(", ".join(f"{np.mean(r):.4f}" for r in result_log) + "\n")


if __name__ == "__main__":
    main()
