# Source: https://github.com/facebookresearch/detectron2/issues/1539
# Report: batching 20 images through a Faster R-CNN for prediction used ~10 GB of RAM and crashed; the maintainer answered that prediction should run image by image and under torch.no_grad(), since inference does not need the autograd state
# Shape: predict_folder() puts the model in eval mode and calls it on chunks of image dicts with grad enabled; only detached CPU fields of each result are kept, but every forward records a graph
# Expect: TML003 line 39
import os

import cv2
import numpy as np
import torch
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.modeling import build_model


def load_detector(config_file, weights, device="cuda", score_thresh=0.5):
    cfg = get_cfg()
    cfg.merge_from_file(config_file)
    cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = score_thresh
    cfg.MODEL.DEVICE = device
    model = build_model(cfg)
    DetectionCheckpointer(model).load(weights)
    return model


def to_input(path):
    img = cv2.imread(path)
    h, w = img.shape[:2]
    tensor = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
    return {"image": tensor, "height": h, "width": w}


def predict_folder(model, folder, chunk=4):
    model.eval()
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith((".jpg", ".png")))
    detections = {}
    for start in range(0, len(names), chunk):
        batch_names = names[start:start + chunk]
        inputs = [to_input(os.path.join(folder, n)) for n in batch_names]
        outputs = model(inputs)  # expect: TML003
        for name, out in zip(batch_names, outputs):
            inst = out["instances"].to("cpu")
            detections[name] = {
                "boxes": inst.pred_boxes.tensor.detach().numpy(),
                "scores": inst.scores.detach().numpy(),
                "classes": inst.pred_classes.numpy(),
            }
    return detections


if __name__ == "__main__":
    detector = load_detector("configs/faster_rcnn_R_101_FPN_3x.yaml", "model_final.pth")
    results = predict_folder(detector, "images")
    print({k: len(v["scores"]) for k, v in results.items()})
