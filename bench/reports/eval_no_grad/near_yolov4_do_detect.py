# Source: https://github.com/Tianxiaomo/pytorch-YOLOv4/pull/434
# Report: the merged PR's version: do_detect keeps model.eval() and runs the forward inside with torch.no_grad()
# Shape: same do_detect helper and camera loop; output = model(img) is computed under no_grad, so post_processing gets a graph-free tensor
# Expect: near-miss: must be silent

import sys
import time

import cv2
import numpy as np
import torch

from tool.utils import post_processing, load_class_names, plot_boxes_cv2
from tool.darknet2pytorch import Darknet


def do_detect(model, img, conf_thresh, nms_thresh, use_cuda=1):
    model.eval()
    t0 = time.time()

    if type(img) == np.ndarray and len(img.shape) == 3:
        img = torch.from_numpy(img.transpose(2, 0, 1)).float().div(255.0).unsqueeze(0)
    elif type(img) == np.ndarray and len(img.shape) == 4:
        img = torch.from_numpy(img.transpose(0, 3, 1, 2)).float().div(255.0)
    else:
        print("unknow image type")
        exit(-1)

    if use_cuda:
        img = img.cuda()
    img = torch.autograd.Variable(img)

    with torch.no_grad():
        t1 = time.time()
        output = model(img)
        t2 = time.time()

    print("-----------------------------------")
    print("           Preprocess : %f" % (t1 - t0))
    print("      Model Inference : %f" % (t2 - t1))
    print("-----------------------------------")

    return post_processing(img, conf_thresh, nms_thresh, output)


def detect_cv2_camera(cfgfile, weightfile, namesfile, use_cuda=True):
    m = Darknet(cfgfile)
    m.print_network()
    m.load_weights(weightfile)
    if use_cuda:
        m.cuda()

    cap = cv2.VideoCapture(0)
    cap.set(3, 1280)
    cap.set(4, 720)
    class_names = load_class_names(namesfile)

    while True:
        ret, img = cap.read()
        if not ret:
            break
        sized = cv2.resize(img, (m.width, m.height))
        sized = cv2.cvtColor(sized, cv2.COLOR_BGR2RGB)

        start = time.time()
        boxes = do_detect(m, sized, 0.4, 0.6, use_cuda)
        finish = time.time()
        print("Predicted in %f seconds." % (finish - start))

        result_img = plot_boxes_cv2(img, boxes[0], savename=None, class_names=class_names)
        cv2.imshow("Yolo demo", result_img)
        if cv2.waitKey(1) & 0xFF == ord("q"):
            break

    cap.release()


if __name__ == "__main__":
    detect_cv2_camera(sys.argv[1], sys.argv[2], sys.argv[3])
