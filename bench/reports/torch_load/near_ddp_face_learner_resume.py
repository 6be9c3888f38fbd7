# Source: https://discuss.pytorch.org/t/train-with-nn-distributeddataparallel-gpu0-will-occupy-much-more-memory-memory/66080
# Report: a DistributedDataParallel face-recognition learner loads its pretrained checkpoint in every rank; nvidia-smi then shows each worker process holding an extra block of memory on GPU 0
# Shape: same learner, but load_state passes map_location=self.device (this rank's GPU), the standard remedy for per-rank copies on GPU 0, so nothing is materialised on cuda:0
# Expect: near-miss: must be silent
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class ArcMarginHead(nn.Module):
    def __init__(self, emb_dim, num_ids, scale=64.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_ids, emb_dim) * 0.01)
        self.scale = scale

    def forward(self, emb, labels):
        cos = nn.functional.linear(nn.functional.normalize(emb), nn.functional.normalize(self.weight))
        return nn.functional.cross_entropy(self.scale * cos, labels)


class FaceLearner:
    def __init__(self, conf, backbone):
        dist.init_process_group(backend="nccl")
        self.local_rank = conf.local_rank
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        self.model = backbone.to(self.device)
        self.head = ArcMarginHead(conf.embedding_size, conf.num_ids).to(self.device)
        self.optimizer = torch.optim.SGD(
            list(self.model.parameters()) + list(self.head.parameters()),
            lr=conf.lr, momentum=0.9, weight_decay=5e-4,
        )
        self.save_dir = Path(conf.save_path)
        self.step = 0
        if conf.resume_from:
            self.load_state(conf.resume_from)
        self.model = DDP(self.model, device_ids=[self.local_rank])

    def load_state(self, fixed_str, model_only=False):
        # checkpoints were written by rank 0: remap cuda:0 onto this rank's device
        model_sd = torch.load(self.save_dir / f"model_{fixed_str}", map_location=self.device)
        self.model.load_state_dict(model_sd)
        if not model_only:
            head_sd = torch.load(self.save_dir / f"head_{fixed_str}", map_location=self.device)
            self.head.load_state_dict(head_sd)
            opt_path = self.save_dir / f"optimizer_{fixed_str}"
            if opt_path.exists():
                self.optimizer.load_state_dict(torch.load(opt_path, map_location=self.device))
        self.step = int(os.path.splitext(fixed_str)[0].split("step")[-1] or 0)

    def save_state(self, tag):
        if self.local_rank != 0:
            return
        torch.save(self.model.module.state_dict(), self.save_dir / f"model_{tag}.pth")
        torch.save(self.head.state_dict(), self.save_dir / f"head_{tag}.pth")
        torch.save(self.optimizer.state_dict(), self.save_dir / f"optimizer_{tag}.pth")

    def train(self, loader, epochs):
        self.model.train()
        for epoch in range(epochs):
            loader.sampler.set_epoch(epoch)
            for imgs, labels in loader:
                imgs = imgs.to(self.device, non_blocking=True)
                labels = labels.to(self.device, non_blocking=True)
                loss = self.head(self.model(imgs), labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.step += 1
                if self.step % 5000 == 0:
                    self.save_state(f"step{self.step}")
