# Source: https://github.com/nok-halfspace/EPFL_ML_Project_2/blob/4802c4fb02ecb8608b25156b39a59bdbfb03a1b7/scripts/testing.py
# Report: (correct real code) predict_test_images() collects one road mask per test image in a list that outlives the loop, but the masks come from a helper that thresholds and returns .cpu().numpy() arrays, so nothing on the GPU is kept
# Shape: the forward runs under torch.no_grad(); probability_to_prediction() returns an int numpy mask; the list of masks feeds patch-wise labelling and the submission CSV
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
IMG_PATCH_SIZE = 16
FOREGROUND_THRESHOLD = 0.25


def probability_to_prediction(outputs):
    mask = (outputs > 0.5).squeeze()
    return mask.cpu().numpy().astype(int)


def predict_test_images(model, loader):
    predicted = []
    model.eval()
    for data in loader:
        imgs = data.to(DEVICE)
        with torch.no_grad():
            outputs = model(imgs)
            predictions = probability_to_prediction(outputs)
            predicted.append(predictions)
    return predicted


def patch_labels(mask, patch=IMG_PATCH_SIZE):
    h, w = mask.shape
    labels = []
    for j in range(0, w, patch):
        for i in range(0, h, patch):
            block = mask[i:i + patch, j:j + patch]
            labels.append((i, j, int(block.mean() > FOREGROUND_THRESHOLD)))
    return labels


def write_submission(path, masks, first_id=1):
    with open(path, "w") as f:
        f.write("id,prediction\n")
        for k, mask in enumerate(masks):
            for i, j, label in patch_labels(np.asarray(mask)):
                f.write(f"{first_id + k:03d}_{j}_{i},{label}\n")


def run_test(network, test_set, submission_path):
    loader = DataLoader(test_set, batch_size=1, shuffle=False)
    print("Predict labels...")
    roads = predict_test_images(network, loader)
    write_submission(submission_path, roads)
    print("See latest submission file", submission_path)
