# Modelled on: https://github.com/pgniewko/gt-pyg/pull/56
# Report: near-miss: other `load` functions (json, numpy, pickle) and torch.load with mmap + map_location.
import json
import pickle

import numpy as np
import torch


def read_run(run_dir):
    with open(f"{run_dir}/config.json") as f:
        config = json.load(f)
    stats = np.load(f"{run_dir}/stats.npy")
    with open(f"{run_dir}/vocab.pkl", "rb") as f:
        vocab = pickle.load(f)
    info = torch.load(f"{run_dir}/model.pt", mmap=True, map_location="cpu", weights_only=True)
    return config, stats, vocab, info
