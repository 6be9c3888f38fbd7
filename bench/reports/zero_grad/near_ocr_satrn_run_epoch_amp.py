# Source: https://github.com/pstage-ocr-team6/ocr-teamcode/pull/26
# Report: when mixed precision was added to the formula-OCR trainer (#25) the optimizer.zero_grad() call was dropped, so both the GradScaler path and the fp32 path stepped on gradients summed over every batch; #26 adds the omitted reset
# Shape: same run_epoch after #26: optimizer.zero_grad() runs once per training batch before the branch, so both the AMP and the plain path start from cleared gradients
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.cuda.amp import autocast
from tqdm import tqdm


def run_epoch(data_loader, model, criterion, optimizer, lr_scheduler, teacher_forcing_ratio,
              max_grad_norm, device, pad_id, scaler=None, train=True):
    torch.set_grad_enabled(train)
    model.train() if train else model.eval()

    def _infer(images, expected):
        output = model(images, expected, train, teacher_forcing_ratio)
        decoded_values = output.transpose(1, 2)
        _, sequence = torch.topk(decoded_values, 1, dim=1)
        loss = criterion(decoded_values, expected[:, 1:])
        return loss, sequence.squeeze(1)

    losses, grad_norms = [], []
    correct_symbols = total_symbols = 0
    with tqdm(total=len(data_loader.dataset), leave=False) as pbar:
        for d in data_loader:
            images = d["image"].to(device)
            expected = d["truth"]["encoded"].to(device)
            expected[expected == -1] = pad_id

            if scaler is not None:
                with autocast():
                    loss, sequence = _infer(images, expected)
            else:
                loss, sequence = _infer(images, expected)

            if train:
                optimizer.zero_grad()
                params = [p for group in optimizer.param_groups for p in group["params"]]
                if scaler is not None:
                    scaler.scale(loss).backward()
                    scaler.unscale_(optimizer)
                    grad_norms.append(nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm).item())
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    loss.backward()
                    grad_norms.append(nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm).item())
                    optimizer.step()
                lr_scheduler.step()

            losses.append(loss.item())
            correct_symbols += torch.sum(sequence == expected[:, 1:], dim=(0, 1)).item()
            total_symbols += torch.sum(expected[:, 1:] != pad_id, dim=(0, 1)).item()
            pbar.update(len(images))

    result = {"loss": np.mean(losses), "correct_symbols": correct_symbols, "total_symbols": total_symbols}
    if train:
        result["grad_norm"] = float(np.mean(grad_norms))
    return result
