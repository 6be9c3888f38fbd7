# Source: https://github.com/DeepGraphLearning/torchdrug/blob/01f4eaf6859ecb07178593ad2e18a9f39b1fdc2c/torchdrug/core/engine.py
# Report: variant of TorchDrug Engine.evaluate that offloads each batch's pred/target to host memory before collecting them (the published code keeps them on the GPU)
# Shape: same evaluate loop under @torch.no_grad(); the lists receive pred.cpu()/target.cpu(), and the concatenated result goes back to the device only for the distributed gather
# Expect: near-miss: must be silent

import logging

import torch
from torch import nn
from torch.utils import data as torch_data

from torchdrug import data, core, utils
from torchdrug.utils import comm, pretty

logger = logging.getLogger(__name__)


class Engine(core.Configurable):
    def __init__(self, task, train_set, valid_set, test_set, optimizer, batch_size=1, num_worker=0,
                 gpus=None, logger="logging", log_interval=100):
        self.rank = comm.get_rank()
        self.world_size = comm.get_world_size()
        self.gpus = gpus
        self.batch_size = batch_size
        self.num_worker = num_worker
        if gpus is None:
            self.device = torch.device("cpu")
        else:
            self.device = torch.device(gpus[self.rank % len(gpus)])
        self.model = task.to(self.device) if self.device.type == "cuda" else task
        self.train_set, self.valid_set, self.test_set = train_set, valid_set, test_set
        self.optimizer = optimizer
        self.meter = core.Meter(log_interval=log_interval, silent=self.rank > 0, logger=logger)

    @torch.no_grad()
    def evaluate(self, split, log=True):
        if comm.get_rank() == 0:
            logger.warning(pretty.separator)
            logger.warning("Evaluate on %s" % split)
        test_set = getattr(self, "%s_set" % split)
        sampler = torch_data.DistributedSampler(test_set, self.world_size, self.rank)
        dataloader = data.DataLoader(test_set, self.batch_size, sampler=sampler, num_workers=self.num_worker)
        model = self.model
        model.split = split

        model.eval()
        preds = []
        targets = []
        for batch in dataloader:
            if self.device.type == "cuda":
                batch = utils.cuda(batch, device=self.device)

            pred, target = model.predict_and_target(batch)
            preds.append(pred.cpu())
            targets.append(target.cpu())

        pred = utils.cat(preds)
        target = utils.cat(targets)
        if self.world_size > 1:
            pred = comm.cat(pred.to(self.device))
            target = comm.cat(target.to(self.device))
        metric = model.evaluate(pred, target)
        if log:
            self.meter.log(metric, category="%s/epoch" % split)

        return metric
