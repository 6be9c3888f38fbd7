# Source: https://github.com/dog-qiuqiu/Yolo-FastestV2/issues/42
# Report: test.py puts the detector in eval() and runs the forward pass with no torch.no_grad(), so every activation is kept for a backward that never comes
# Shape: script-level main: model.eval(), preprocess one image, preds = model(img) outside any grad-disabled context, then handel_preds/NMS and drawing
# Expect: TML003 line 48

import os
import time
import argparse

import cv2
import torch

import model.detector
import utils.utils


def load_label_names(path):
    names = []
    with open(path, "r") as f:
        for line in f.readlines():
            names.append(line.strip())
    return names


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, default="", help="training profile *.data")
    parser.add_argument("--weights", type=str, default="", help="path of the .pth model")
    parser.add_argument("--img", type=str, default="", help="path of the test image")
    opt = parser.parse_args()

    cfg = utils.utils.load_datafile(opt.data)
    assert os.path.exists(opt.weights), "weights path does not exist"
    assert os.path.exists(opt.img), "image path does not exist"

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = model.detector.Detector(cfg["classes"], cfg["anchor_num"], True).to(device)
    net.load_state_dict(torch.load(opt.weights, map_location=device))
    net.eval()

    ori_img = cv2.imread(opt.img)
    res_img = cv2.resize(ori_img, (cfg["width"], cfg["height"]), interpolation=cv2.INTER_LINEAR)
    img = res_img.reshape(1, cfg["height"], cfg["width"], 3)
    img = torch.from_numpy(img.transpose(0, 3, 1, 2))
    img = img.to(device).float() / 255.0

    start = time.perf_counter()
    preds = net(img)  # expect: TML003
    end = time.perf_counter()
    print("forward time:%fms" % ((end - start) * 1000.0))

    output = utils.utils.handel_preds(preds, cfg, device)
    output_boxes = utils.utils.non_max_suppression(output, conf_thres=0.3, iou_thres=0.4)

    label_names = load_label_names(cfg["names"])
    h, w, _ = ori_img.shape
    scale_h, scale_w = h / cfg["height"], w / cfg["width"]

    for box in output_boxes[0]:
        box = box.tolist()
        obj_score = box[4]
        category = label_names[int(box[5])]
        x1, y1 = int(box[0] * scale_w), int(box[1] * scale_h)
        x2, y2 = int(box[2] * scale_w), int(box[3] * scale_h)
        cv2.rectangle(ori_img, (x1, y1), (x2, y2), (255, 255, 0), 2)
        cv2.putText(ori_img, "%.2f" % obj_score, (x1, y1 - 5), 0, 0.7, (0, 255, 0), 2)
        cv2.putText(ori_img, category, (x1, y1 - 25), 0, 0.7, (0, 255, 0), 2)

    cv2.imwrite("test_result.png", ori_img)
