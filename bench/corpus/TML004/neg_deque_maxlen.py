# Modelled on: https://github.com/WENGSYX/CMIVQA_Baseline/issues/12
# Report: near-miss: only the last few batches are kept, in a bounded deque, for a rolling visual check.
from collections import deque

import torch


def monitor(model, loader, keep=4):
    recent = deque(maxlen=keep)
    model.eval()
    with torch.inference_mode():
        for batch in loader:
            recent.append(model(batch.cuda()))
    return list(recent)
