# Source: https://github.com/nok-halfspace/EPFL_ML_Project_2/blob/4802c4fb02ecb8608b25156b39a59bdbfb03a1b7/scripts/testing.py
# Report: (leaking variant the repository avoided) predict_test_images() keeps each test image's raw road-probability map, still on the GPU, in a list that lives until every image is predicted, and thresholds them all at the end
# Shape: the forward runs under torch.no_grad(), so no graph is kept, but the appended outputs are CUDA tensors; probability_to_prediction() moves them to numpy only after torch.cat of the whole test set
# Expect: TML004 line 26
import numpy as np
import torch
from torch.utils.data import DataLoader

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
IMG_PATCH_SIZE = 16
FOREGROUND_THRESHOLD = 0.25


def probability_to_prediction(prob_maps):
    masks = (prob_maps > 0.5).squeeze(1)
    return list(masks.cpu().numpy().astype(int))


def predict_test_images(model, loader):
    predicted = []
    model.eval()
    for data in loader:
        imgs = data.to(DEVICE)
        with torch.no_grad():
            outputs = model(imgs)
            predicted.append(outputs)  # expect: TML004
    return probability_to_prediction(torch.cat(predicted))


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
