# Source: https://github.com/YUL-git/LTSF_Linear_Model_Incorporating_Future_Past_and_Static_Covariates/blob/f0f483c70839ed20a35d5c54adead0dfa42ba430/DLinear/predict.py
# Report: removed `output = output.cpu().numpy()` before `predictions.extend(output)` in the DLinear inference of this Dacon sales-forecasting competition pipeline
# Shape: inference() runs under no_grad but extends the test-wide `predictions` list with the rows of each GPU output batch, so every forecast stays on the device until the submission is built
# Expect: TML004 line 29

import os

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from .dataset import CustomDataset
from .model import DLinear


def inference(model, test_loader, device):
    model.to(device)
    model.eval()
    predictions = []

    with torch.no_grad():
        for X in tqdm(iter(test_loader)):
            X = tuple(map(lambda x: x.to(device), X))

            output = model(X)

            predictions.extend(output)  # expect: TML004

    return torch.stack(predictions).cpu().numpy()


def load_best(config, device):
    model = DLinear(config)
    path = os.path.join(config['model_save_path'], config['best_model_name'])
    model.load_state_dict(torch.load(path, map_location=device))
    return model


def make_submission(config, test_input, submit_path, device='cuda'):
    test_dataset = CustomDataset(test_input, None)
    test_loader = DataLoader(test_dataset, batch_size=config['batch_size'], shuffle=False, num_workers=0)

    model = load_best(config, device)
    pred = inference(model, test_loader, device)

    # reverse the min-max scaling per product, then round to integer sales
    scale_max, scale_min = config['scale_max'], config['scale_min']
    for idx in range(len(pred)):
        pred[idx, :] = pred[idx, :] * (scale_max[idx] - scale_min[idx]) + scale_min[idx]
    pred = np.round(pred, 0).astype(int)

    submit = pd.read_csv(config['sample_submission'])
    submit.iloc[:, 1:] = pred
    submit.to_csv(submit_path, index=False)
    return submit
