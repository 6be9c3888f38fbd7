# Modelled on: https://github.com/NVIDIA/apex/issues/458
# Report: without map_location, every process that loads a checkpoint first deserializes its tensors onto the device they were saved from, creating spurious contexts on GPU 0.
import os

import torch


def resume(args, model, optimizer):
    if os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume)  # expect: TML011
        args.start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    return args.start_epoch
