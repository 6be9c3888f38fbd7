# Source: https://github.com/clovaai/CRAFT-pytorch/issues/15
# Report: running the text detector's test script on a folder of images hits CUDA out of memory even on a large card; wrapping the forward pass in torch.no_grad() fixed it, since inference never needs the saved activations
# Shape: test_net() resizes, normalises and runs the detector with grad enabled (the model is in eval mode); score maps are copied to numpy but the activations for backward are built every image
# Expect: TML003 line 39
import os

import cv2
import numpy as np
import torch


MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255.0
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255.0


def resize_aspect_ratio(img, square_size, mag_ratio=1.5):
    h, w, _ = img.shape
    target = min(mag_ratio * max(h, w), square_size)
    ratio = target / max(h, w)
    th, tw = int(h * ratio), int(w * ratio)
    resized = cv2.resize(img, (tw, th), interpolation=cv2.INTER_LINEAR)
    pad_h, pad_w = (32 - th % 32) % 32, (32 - tw % 32) % 32
    canvas = np.zeros((th + pad_h, tw + pad_w, 3), dtype=np.float32)
    canvas[:th, :tw, :] = resized
    return canvas, ratio


def boxes_from_maps(text_map, link_map, text_thr, link_thr):
    mask = ((text_map > text_thr) | (link_map > link_thr)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    return [stats[k, :4] for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= 10]


def test_net(net, image, device, canvas_size=1280, text_thr=0.7, link_thr=0.4):
    img, ratio = resize_aspect_ratio(image, canvas_size)
    x = torch.from_numpy((img - MEAN) / STD).permute(2, 0, 1)
    x = x.unsqueeze(0).to(device)

    y, _feature = net(x)  # expect: TML003

    score_text = y[0, :, :, 0].cpu().data.numpy()
    score_link = y[0, :, :, 1].cpu().data.numpy()
    boxes = boxes_from_maps(score_text, score_link, text_thr, link_thr)
    return [(b * 2 / ratio).astype(np.int32) for b in boxes], score_text


def run_folder(net, folder, out_dir, device="cuda"):
    net.to(device)
    net.eval()
    os.makedirs(out_dir, exist_ok=True)
    results = {}
    for name in sorted(os.listdir(folder)):
        image = cv2.imread(os.path.join(folder, name))[:, :, ::-1].astype(np.float32)
        boxes, heat = test_net(net, image, device)
        results[name] = boxes
        heat_img = (np.clip(heat, 0, 1) * 255).astype(np.uint8)
        cv2.imwrite(os.path.join(out_dir, "res_" + name), heat_img)
        print(f"{name}: {len(boxes)} regions")
    return results
