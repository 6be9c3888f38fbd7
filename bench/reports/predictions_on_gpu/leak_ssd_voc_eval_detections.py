# Source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Object-Detection/blob/HEAD/eval.py
# Report: audit of the SSD300 VOC evaluation: under no_grad, every test image's detected boxes/labels/scores and its ground-truth boxes (moved .to(device)) are collected into lists that stay on the GPU until mAP is computed over the whole test set
# Shape: per-image detections from model.detect_objects and ground truth sent to the device are appended to six lists created before the loop, kept on the GPU for all 4952 VOC test images
# Expect: TML004 line 46; TML004 line 47; TML004 line 48; TML004 line 49; TML004 line 50; TML004 line 51
from pprint import PrettyPrinter

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from datasets import PascalVOCDataset
from utils import calculate_mAP

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
pp = PrettyPrinter()


def load_checkpoint(path):
    checkpoint = torch.load(path, map_location=device)
    model = checkpoint["model"].to(device)
    model.eval()
    return model


def make_test_loader(data_folder, batch_size=64, workers=4):
    dataset = PascalVOCDataset(data_folder, split="test", keep_difficult=True)
    return DataLoader(dataset, batch_size=batch_size, shuffle=False,
                      collate_fn=dataset.collate_fn, num_workers=workers, pin_memory=True)


def evaluate(test_loader, model, min_score=0.01, max_overlap=0.45, top_k=200):
    model.eval()
    det_boxes, det_labels, det_scores = [], [], []
    true_boxes, true_labels, true_difficulties = [], [], []

    with torch.no_grad():
        for images, boxes, labels, difficulties in tqdm(test_loader, desc="Evaluating"):
            images = images.to(device)
            predicted_locs, predicted_scores = model(images)
            batch_boxes, batch_labels, batch_scores = model.detect_objects(
                predicted_locs, predicted_scores,
                min_score=min_score, max_overlap=max_overlap, top_k=top_k)

            # keep this batch's results for the mAP computation at the end
            for i in range(images.size(0)):
                det_boxes.append(batch_boxes[i])  # expect: TML004
                det_labels.append(batch_labels[i])  # expect: TML004
                det_scores.append(batch_scores[i])  # expect: TML004
                true_boxes.append(boxes[i].to(device))  # expect: TML004
                true_labels.append(labels[i].to(device))  # expect: TML004
                true_difficulties.append(difficulties[i].to(device))  # expect: TML004

        aps, mean_ap = calculate_mAP(det_boxes, det_labels, det_scores,
                                     true_boxes, true_labels, true_difficulties)

    pp.pprint(aps)
    print("\nMean Average Precision (mAP): %.3f" % mean_ap)
    return mean_ap


if __name__ == "__main__":
    net = load_checkpoint("./checkpoint_ssd300.pth.tar")
    evaluate(make_test_loader("./"), net)
