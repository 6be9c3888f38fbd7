# Modelled on: https://discuss.pytorch.org/t/control-gpu-memory-cache/175356/2
# Report: near-miss: empty_cache at a task boundary (after dropping a large model), not inside a loop.
import torch


def swap_models(old_model, new_checkpoint):
    del old_model
    torch.cuda.empty_cache()
    model = torch.load(new_checkpoint, map_location="cuda", weights_only=False)
    return model.eval()
