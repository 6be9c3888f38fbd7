# Source: https://github.com/streptkinase/kaggle-rsna/blob/83f27f1c1272ab4efc00b2f2bd02ab2e621ed11c/src/cnn/main.py
# Report: removed the `.item()` from `losses.append(loss.item())` in run_nn of this RSNA intracranial-hemorrhage Kaggle solution (the append stays inside its `with torch.no_grad():` block)
# Shape: run_nn keeps every training-step loss tensor (with its grad_fn) in the `losses` list for the whole epoch; wrapping the append in no_grad does not detach a loss computed outside it
# Expect: TML001 line 38

import sys
import time

import numpy as np
import torch

from .utils import util
from .utils.logger import log


def run_nn(cfg, mode, model, loader, criterion=None, optim=None, apex=None):
    if mode in ['train']:
        model.train()
    elif mode in ['valid', 'test']:
        model.eval()
    else:
        raise ValueError(mode)

    t1 = time.time()
    losses = []
    ids_all = []
    targets_all = []
    outputs_all = []

    for i, (inputs, targets, ids) in enumerate(loader):
        inputs = inputs.cuda()
        targets = targets.cuda()
        outputs = model(inputs)

        if mode in ['train', 'valid']:
            loss = criterion(outputs, targets)
            with torch.no_grad():
                losses.append(loss)  # expect: TML001

        if mode in ['train']:
            loss.backward()
            if (i + 1) % cfg.n_grad_acc == 0:
                optim.step()
                optim.zero_grad()

        with torch.no_grad():
            ids_all.extend(ids)
            targets_all.extend(targets.cpu().numpy())
            outputs_all.extend(torch.sigmoid(outputs).cpu().numpy())

        elapsed = int(time.time() - t1)
        eta = int(elapsed / (i + 1) * (len(loader) - (i + 1)))
        running = torch.stack(losses).sum().item() / (i + 1) if losses else 0.0
        progress = f'\r[{mode}] {i+1}/{len(loader)} {elapsed}(s) eta:{eta}(s) loss:{running:.6f} lr:{util.get_lr(optim):.2e}'
        print(progress, end='')
        sys.stdout.flush()

    result = {
        'ids': ids_all,
        'targets': np.array(targets_all),
        'outputs': np.array(outputs_all),
        'loss': torch.stack(losses).sum().item() / (i + 1) if losses else 0.0,
    }
    log(progress)
    return result


def train(cfg, model, loader_train, loader_valid, criterion, optim, scheduler):
    best = {'loss': float('inf'), 'epoch': -1}
    for epoch in range(cfg.epoch):
        log(f'\n----- epoch {epoch} -----')
        util.set_seed(epoch)
        run_nn(cfg.data.train, 'train', model, loader_train, criterion=criterion, optim=optim, apex=cfg.apex)
        with torch.no_grad():
            val = run_nn(cfg.data.valid, 'valid', model, loader_valid, criterion=criterion)
        if val['loss'] <= best['loss']:
            best.update({'loss': val['loss'], 'epoch': epoch})
        util.save_model(model, optim, {'loss': val['loss'], 'epoch': epoch}, cfg.fold, cfg.workdir)
        scheduler.step()
    return best
