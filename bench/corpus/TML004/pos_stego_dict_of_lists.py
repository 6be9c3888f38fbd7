# Modelled on: https://github.com/mhamilton723/STEGO/issues/1
# Report: evaluation collected per-batch outputs in a dict of lists and concatenated them at the end; memory rose until the job failed.
from collections import defaultdict

import torch
from tqdm import tqdm


def eval_segmentation(model, loader, device):
    outputs = defaultdict(list)
    model.eval()
    with torch.no_grad():
        for batch in tqdm(loader):
            img = batch["img"].to(device)
            code = model(img)
            linear_probs = torch.log_softmax(model.linear_probe(code), dim=1)
            outputs["linear_probs"].append(linear_probs)  # expect: TML004
            outputs["label"].append(batch["label"].to(device))  # expect: TML004
    return {name: torch.cat(chunks) for name, chunks in outputs.items()}
