# Source: https://github.com/ambroggi/Pruning-Project-for-Deep-Neural-Networks/blob/main/src/Imported_Code/ThiNet_From_Paper.py
# Report: ThiNet filter pruning: a forward hook on layer i+1 captures its input for one calibration pass, then channels of layer i are chosen greedily by re-running layer i+1 (here the hook removal is forgotten)
# Shape: one edit from the repository: the handle is never removed, so each call of thinet_prune_layer (once per layer, on the same model) leaves another capture hook behind that fires, and keeps its input, on every later forward
# Expect: TML007 line 26
import torch
import torch.nn as nn


class InputCapture:
    def __init__(self):
        self.inp = None
        self.out = None

    def __call__(self, module, inputs, output):
        self.inp = inputs[0]
        self.out = output


def thinet_prune_layer(model, layer_idx, keep_ratio, calib_batch):
    with torch.no_grad():
        capture = InputCapture()
        target = None
        handle = None
        for i, module in enumerate(model.important_modules()):
            if i == layer_idx + 1:
                handle = module.register_forward_hook(capture)  # expect: TML007
                next_layer = module
                break
            if i == layer_idx:
                target = module
        else:
            raise IndexError("cannot prune the last layer")

        model(calib_batch)

        n_channels = target.out_channels if isinstance(target, nn.Conv1d) else target.out_features
        mask = torch.zeros(n_channels, device=calib_batch.device)
        removed = []
        while len(removed) < int((1 - keep_ratio) * n_channels):
            best_val, best_ch = float("inf"), None
            for ch in range(n_channels):
                if ch in removed:
                    continue
                mask[ch] = 1
                x = next_layer(capture.inp * _expand(mask, capture.inp))
                score = x.norm(2, 1).sum()
                if score < best_val:
                    best_val = score.item()
                    best_ch = ch
                mask[ch] = 0
            removed.append(best_ch)
            mask[best_ch] = 1
        return [c for c in range(n_channels) if c not in removed]


def _expand(mask, ref):
    shape = [1, -1] + [1] * (ref.dim() - 2)
    return mask.view(*shape)


def prune_all_layers(model, n_layers, ratios, loader):
    calib = next(iter(loader))[0].cuda()
    kept = {}
    for layer_idx in range(n_layers - 1):
        kept[layer_idx] = thinet_prune_layer(model, layer_idx, ratios[layer_idx], calib)
        model.shrink(layer_idx, kept[layer_idx])
    return kept
