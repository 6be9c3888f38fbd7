# Source: https://github.com/bytedance/ibot/blob/c24f870dc85c0322200e66399c05af193b8c9554/evaluation/eval_video_segmentation.py
# Report: audited correct idiom: DAVIS label propagation keeps the features and soft masks of only the n preceding frames in a queue.Queue(n_last_frames), popping the oldest before each put
# Shape: the bounded queue becomes a plain list that is only sliced for reading: every frame's GPU feature map and mask are appended and kept until the video ends
# Expect: TML004 line 53
import copy
import os

import numpy as np
import torch
from torch.nn import functional as F


def extract_feature(model, frame, return_h_w=False):
    out = model.get_intermediate_layers(frame.unsqueeze(0).cuda(), n=1)[0]
    out = out[:, 1:, :]
    h = int(frame.shape[1] / model.patch_embed.patch_size)
    w = int(frame.shape[2] / model.patch_embed.patch_size)
    out = out[0].reshape(h * w, -1)
    return (out, h, w) if return_h_w else out


def label_propagation(args, model, frame_tar, list_frame_feats, list_segs):
    feat_tar, h, w = extract_feature(model, frame_tar, return_h_w=True)
    return_feat_tar = feat_tar.T
    feat_sources = F.normalize(torch.stack(list_frame_feats), dim=1, p=2)
    feat_tar = F.normalize(feat_tar, dim=1, p=2).unsqueeze(0).repeat(len(list_frame_feats), 1, 1)
    aff = torch.exp(torch.bmm(feat_tar, feat_sources) / 0.1)
    aff = aff.transpose(2, 1).reshape(-1, h * w)
    tk_val, _ = torch.topk(aff, dim=0, k=args.topk)
    aff[aff < tk_val.min(dim=0)[0]] = 0
    aff = aff / torch.sum(aff, keepdim=True, axis=0)
    segs = torch.cat([s.cuda() for s in list_segs])
    n, C = segs.shape[:2]
    segs = segs.reshape(n, C, -1).transpose(2, 1).reshape(-1, C).T
    return torch.mm(segs, aff).reshape(1, C, h, w), return_feat_tar


@torch.no_grad()
def eval_video_tracking_davis(args, model, frame_list, video_folder, first_seg, read_frame, save_png):
    os.makedirs(video_folder, exist_ok=True)
    context = []  # [feat, seg] of the preceding frames

    frame1, ori_h, ori_w = read_frame(frame_list[0])
    frame1_feat = extract_feature(model, frame1).T
    for cnt in range(1, len(frame_list)):
        frame_tar = read_frame(frame_list[cnt])[0]
        recent = context[-args.n_last_frames:]
        used_frame_feats = [frame1_feat] + [pair[0] for pair in recent]
        used_segs = [first_seg] + [pair[1] for pair in recent]

        frame_tar_avg, feat_tar = label_propagation(args, model, frame_tar, used_frame_feats, used_segs)
        seg = copy.deepcopy(frame_tar_avg)
        context.append([feat_tar, seg])  # expect: TML004

        frame_tar_avg = F.interpolate(frame_tar_avg, scale_factor=args.patch_size,
                                      mode='bilinear', align_corners=False)[0]
        _, frame_tar_seg = torch.max(frame_tar_avg, dim=0)
        frame_tar_seg = np.array(frame_tar_seg.squeeze().cpu(), dtype=np.uint8)
        save_png(os.path.join(video_folder, '%05d.png' % cnt), frame_tar_seg, (ori_w, ori_h))
