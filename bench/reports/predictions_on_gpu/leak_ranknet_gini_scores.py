# Source: https://github.com/yinhaoxs/Keep-Your-Drive/blob/0c2a90c0cf6b824ebdb6e406d0b3b1124f818c65/KYD_RankNet/model/evalute_gini.py
# Report: audit: evalute() runs the RankNet scorer under no_grad and appends (img_name, score) for every batch, with score still the CUDA output tensor, so the whole test set's scores stay on the GPU until the gini table is built
# Shape: no_grad scoring loop appends a (names, device tensor) tuple per batch to a list returned to the caller, which only then flattens it into a pandas frame
# Expect: TML004 line 34
import argparse

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader

from model.ranknet import RankNet
from data.driving_dataset import DrivingImageDataset


def gini(actual, pred):
    order = np.lexsort((np.arange(len(actual)), -np.asarray(pred)))
    actual = np.asarray(actual, dtype=np.float64)[order]
    cum = np.cumsum(actual) / actual.sum()
    return cum.sum() / len(actual) - (len(actual) + 1) / (2.0 * len(actual))


def normalized_gini(actual, pred):
    return gini(actual, pred) / gini(actual, actual)


def evaluate(data_loader, model, device):
    model.eval()
    output_lists = []
    with torch.no_grad():
        for batch_index, (img_name, data) in enumerate(data_loader, 1):
            data = data.to(device)
            score = model(data)
            output_lists.append((img_name, score))  # expect: TML004
    return output_lists


def to_frame(output_lists):
    names, scores = [], []
    for batch_names, batch_scores in output_lists:
        names.extend(batch_names)
        scores.extend(batch_scores.squeeze(-1).tolist())
    return pd.DataFrame({"img_name": names, "score": scores})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--test_csv", default="data/test_claims.csv")
    parser.add_argument("--image_dir", default="data/frames")
    parser.add_argument("--weights", default="checkpoints/ranknet_best.pth")
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = RankNet(backbone="resnet50").to(device)
    model.load_state_dict(torch.load(args.weights, map_location=device))

    claims = pd.read_csv(args.test_csv)
    dataset = DrivingImageDataset(args.image_dir, claims["img_name"].tolist())
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=4)

    frame = to_frame(evaluate(loader, model, device))
    merged = claims.merge(frame, on="img_name")
    print("normalized gini: %.4f" % normalized_gini(merged["claim"], merged["score"]))
    merged.to_csv("ranknet_scores.csv", index=False)


if __name__ == "__main__":
    main()
