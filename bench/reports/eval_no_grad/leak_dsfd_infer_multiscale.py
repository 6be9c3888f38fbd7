# Source: https://github.com/Tencent/FaceDetection-DSFD/issues/11
# Report: demo.py cannot process more than one image in a loop (CUDA OOM); `volatile=True` no longer works, fix is torch.no_grad in infer() (source note: demo.py infer(), https://github.com/Tencent/FaceDetection-DSFD/blob/25ce7521a450023ff39dcdf242ffd5d40c6b1656/demo.py)
# Shape: infer() is called many times per image (flip + multi-scale pyramid) on a ResNet152 SSD after net.eval(); forward keeps its activations
# Expect: TML003 line 28
import argparse

import cv2
import numpy as np
import torch

from face_ssd import build_ssd
from data import TestBaseTransform, widerface_640, WIDERFace_CLASSES
from widerface_val import bbox_vote

parser = argparse.ArgumentParser(description="DSFD: Dual Shot Face Detector")
parser.add_argument("--trained_model", default="weights/WIDERFace_DSFD_RES152.pth")
parser.add_argument("--img_list", default="./data/selfies.txt")
args = parser.parse_args()


def infer(net, img, transform, thresh, shrink):
    if shrink != 1:
        img = cv2.resize(img, None, None, fx=shrink, fy=shrink,
                         interpolation=cv2.INTER_LINEAR)
    x = torch.from_numpy(transform(img)[0]).permute(2, 0, 1)
    x = x.unsqueeze(0).cuda()
    x.requires_grad_(False)  # was: Variable(x, volatile=True), a no-op since 0.4
    y = net(x)  # expect: TML003
    detections = y.data
    scale = torch.tensor([img.shape[1] / shrink, img.shape[0] / shrink,
                          img.shape[1] / shrink, img.shape[0] / shrink])
    det = []
    for i in range(detections.size(1)):
        j = 0
        while detections[0, i, j, 0] >= thresh:
            score = float(detections[0, i, j, 0])
            pt = (detections[0, i, j, 1:].cpu() * scale).numpy()
            det.append([pt[0], pt[1], pt[2], pt[3], score])
            j += 1
    if not det:
        det = [[0.1, 0.1, 0.2, 0.2, 0.01]]
    return np.array(det)


def infer_flip(net, img, transform, thresh, shrink):
    img = cv2.flip(img, 1)
    det = infer(net, img, transform, thresh, shrink)
    det_t = det.copy()
    det_t[:, 0] = img.shape[1] - det[:, 2]
    det_t[:, 2] = img.shape[1] - det[:, 0]
    return det_t


def detect_image(net, img, transform, thresh):
    max_im_shrink = ((2000.0 * 2000.0) / (img.shape[0] * img.shape[1])) ** 0.5
    shrink = max_im_shrink if max_im_shrink < 1 else 1
    det0 = infer(net, img, transform, thresh, shrink)
    det1 = infer_flip(net, img, transform, thresh, shrink)
    bt = min(2, max_im_shrink) if max_im_shrink > 1 else (0.5 + max_im_shrink) / 2
    det_b = infer(net, img, transform, thresh, bt)
    while bt * 2 < max_im_shrink:
        bt *= 2
        det_b = np.row_stack((det_b, infer(net, img, transform, thresh, bt)))
    return bbox_vote(np.row_stack((det0, det1, det_b)))


def main():
    cfg = widerface_640
    net = build_ssd("test", cfg["min_dim"], len(WIDERFace_CLASSES) + 1)
    net.load_state_dict(torch.load(args.trained_model, map_location="cpu"))
    net.cuda()
    net.eval()
    transform = TestBaseTransform((104, 117, 123))
    with open(args.img_list) as f:
        paths = [line.strip() for line in f if line.strip()]
    for path in paths:
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        det = detect_image(net, img, transform, cfg["conf_thresh"])
        print(path, det.shape[0], "faces")


if __name__ == "__main__":
    main()
