# Source: https://github.com/streptkinase/kaggle-rsna/blob/83f27f1c1272ab4efc00b2f2bd02ab2e621ed11c/src/cnn/main.py
# Report: near-miss twin of the RSNA TTA accumulator: batch outputs are collected in a list and concatenated once after the loop
# Shape: each sigmoid batch goes to the CPU and into the `chunks` list; torch.cat(chunks) runs a single time after the loader is exhausted
# Expect: near-miss: must be silent

import pickle
import sys
import time

import numpy as np
import torch

from . import factory
from .utils import util
from .utils.logger import log


@torch.no_grad()
def run_nn_infer(cfg, mode, model, loader, criterion=None):
    model.eval()
    t1 = time.time()
    losses = []
    ids_all = []
    targets_all = []
    chunks = []

    for i, (inputs, targets, ids) in enumerate(loader):
        inputs = inputs.cuda()
        targets = targets.cuda()
        outputs = model(inputs)

        if mode == 'valid':
            losses.append(criterion(outputs, targets).item())

        ids_all.extend(ids)
        targets_all.extend(targets.cpu().numpy())
        chunks.append(torch.sigmoid(outputs).cpu())

        elapsed = int(time.time() - t1)
        eta = int(elapsed / (i + 1) * (len(loader) - (i + 1)))
        print(f'\r[{mode}] {i+1}/{len(loader)} {elapsed}(s) eta:{eta}(s)', end='')
        sys.stdout.flush()

    result = {
        'ids': ids_all,
        'targets': np.array(targets_all),
        'outputs': torch.cat(chunks).numpy(),
        'loss': np.sum(losses) / (i + 1) if losses else None,
    }
    log('')
    return result


def test(cfg, model):
    assert cfg.output
    util.load_model(cfg.snapshot, model)
    loader_test = factory.get_dataloader(cfg.data.test)
    with torch.no_grad():
        results = [run_nn_infer(cfg.data.test, 'test', model, loader_test) for _ in range(cfg.n_tta)]
    with open(cfg.output, 'wb') as f:
        pickle.dump(results, f)
    log('saved to %s' % cfg.output)


def valid(cfg, model):
    assert cfg.output
    criterion = factory.get_loss(cfg)
    util.load_model(cfg.snapshot, model)
    loader_valid = factory.get_dataloader(cfg.data.valid, [cfg.fold])
    with torch.no_grad():
        results = [run_nn_infer(cfg.data.valid, 'valid', model, loader_valid, criterion=criterion)
                   for _ in range(cfg.n_tta)]
    with open(cfg.output, 'wb') as f:
        pickle.dump(results, f)
    log('saved to %s' % cfg.output)
