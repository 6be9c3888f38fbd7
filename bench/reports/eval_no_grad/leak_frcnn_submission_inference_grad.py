# Source: https://github.com/boostcampaitech3/level2-object-detection-level2-cv-15/blob/c041731d4c45e40d13428672a8c41de6f0085057/faster_rcnn/inference.py
# Report: inference_fn runs the Faster R-CNN over the test loader after model.eval() with autograd still on, so every batch saves the backbone/RPN/ROI activations for a backward that never comes (the boxes are turned into lists, so only the peak grows)
# Shape: an inference helper converts each detection dict with .tolist() before keeping it, but the forward itself is not under a grad-disabled context
# Expect: TML003 line 33
import pandas as pd
import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from tqdm import tqdm


def build_detector(num_classes, checkpoint, device):
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None)
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    return model.to(device)


def to_prediction_string(det, score_threshold):
    parts = []
    for box, score, label in zip(det["boxes"], det["scores"], det["labels"]):
        if score > score_threshold:
            parts.append(f"{label - 1} {score} {box[0]} {box[1]} {box[2]} {box[3]}")
    return " ".join(parts)


def inference_fn(test_loader, model, device):
    records = []
    for images in tqdm(test_loader, desc="inference"):
        images = [img.to(device) for img in images]
        detections = model(images)  # expect: TML003
        for det in detections:
            records.append({
                "boxes": det["boxes"].tolist(),
                "scores": det["scores"].tolist(),
                "labels": det["labels"].tolist(),
            })
    return records


def make_submission(test_dataset, file_names, checkpoint, out_csv, score_threshold=0.05):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    test_loader = DataLoader(test_dataset, batch_size=8, shuffle=False, num_workers=4)
    model = build_detector(11, checkpoint, device)
    model.eval()
    records = inference_fn(test_loader, model, device)
    submission = pd.DataFrame({
        "PredictionString": [to_prediction_string(r, score_threshold) for r in records],
        "image_id": file_names,
    })
    submission.to_csv(out_csv, index=False)
    return submission
