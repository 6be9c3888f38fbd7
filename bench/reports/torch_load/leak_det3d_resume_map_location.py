# Source: https://github.com/V2AI/Det3D/issues/104
# Report: Resuming distributed training from a checkpoint failed because map_location was an int (torch.cuda.current_device()); the reporter "fixed" it by calling torch.load(filename) without map_location; the maintainer suggested mapping to the current CUDA device (Det3D trainer.resume now passes map_location=torch.device(torch.cuda.current_device())).
# Shape: Det3D-style Trainer.resume -> load_checkpoint helper -> torch.load(filename) with no map_location: on every rank the tensors come back on the GPU they were saved from (GPU 0).
# Expect: TML011 line 35

import logging
import os.path as osp
from collections import OrderedDict

import torch
import torch.distributed as dist


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def load_state_dict(module, state_dict, strict=False, logger=None):
    own_state = module.state_dict()
    unexpected = [k for k in state_dict if k not in own_state]
    for name, param in state_dict.items():
        if name in own_state and own_state[name].size() == param.size():
            own_state[name].copy_(param)
    missing = [k for k in own_state if k not in state_dict]
    if logger is not None and (unexpected or missing):
        logger.warning("unexpected keys: %s, missing keys: %s", unexpected, missing)


def load_checkpoint(model, filename, strict=False, logger=None):
    if not osp.isfile(filename):
        raise IOError("{} is not a checkpoint file".format(filename))
    # workaround for "'int' object is not callable": map_location dropped entirely
    checkpoint = torch.load(filename)  # expect: TML011
    if isinstance(checkpoint, OrderedDict):
        state_dict = checkpoint
    elif isinstance(checkpoint, dict) and "state_dict" in checkpoint:
        state_dict = checkpoint["state_dict"]
    else:
        raise RuntimeError("No state_dict found in checkpoint file {}".format(filename))
    if list(state_dict.keys())[0].startswith("module."):
        state_dict = {k[7:]: v for k, v in state_dict.items()}
    target = model.module if hasattr(model, "module") else model
    load_state_dict(target, state_dict, strict, logger)
    return checkpoint


class Trainer(object):
    def __init__(self, model, optimizer=None, logger=None):
        self.model = model
        self.optimizer = optimizer
        self.logger = logger or logging.getLogger(__name__)
        self._rank, self._world_size = get_dist_info()
        self._epoch = 0
        self._iter = 0

    def load_checkpoint(self, filename, strict=False):
        self.logger.info("load checkpoint from %s", filename)
        return load_checkpoint(self.model, filename, strict, self.logger)

    def resume(self, checkpoint, resume_optimizer=True):
        # every rank (one process per GPU) resumes from the same rank-0 file
        checkpoint = self.load_checkpoint(checkpoint)
        self._epoch = checkpoint["meta"]["epoch"]
        self._iter = checkpoint["meta"]["iter"]
        if "optimizer" in checkpoint and resume_optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.logger.info("resumed epoch %d, iter %d", self._epoch, self._iter)
