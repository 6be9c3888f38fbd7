# Modelled on: https://github.com/yuantianyuan01/FastWAM/pull/20
# Report: the fix: load large checkpoints with map_location="cpu" to avoid temporary GPU tensors at start-up.
import torch


def load_checkpoint(model, path, device):
    state_dict = torch.load(path, map_location="cpu")
    model.load_state_dict(state_dict)
    return model.to(device)
