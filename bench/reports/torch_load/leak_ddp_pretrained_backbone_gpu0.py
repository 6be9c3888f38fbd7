# Source: https://blog.youkuaiyun.com/isunLt/article/details/120337207
# Report: single-machine multi-GPU DDP training ran out of memory while loading pretrained weights although the same code fit on one card; three extra processes (the other ranks' loaded weights) were sitting on GPU 0
# Shape: each spawned rank builds the segmentation net and restores the pretrained backbone with torch.load(path)["model"] and no map_location, so every rank's copy lands on cuda:0
# Expect: TML011 line 34
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class SegNet(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Conv2d(backbone.out_channels, num_classes, kernel_size=1)

    def forward(self, x):
        feats = self.backbone(x)
        logits = self.head(feats)
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


def build_model(cfg, rank):
    backbone = cfg.backbone_fn()
    model = SegNet(backbone, cfg.num_classes)
    if cfg.pretrained:
        # checkpoint was saved from a GPU run
        pretrain_weight = torch.load(cfg.pretrained)["model"]  # expect: TML011
        missing, unexpected = model.backbone.load_state_dict(pretrain_weight, strict=False)
        if rank == 0:
            print(f"loaded backbone: {len(missing)} missing, {len(unexpected)} unexpected keys")
    return model.to(rank)


def main_worker(rank, world_size, cfg, train_set):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)

    model = DDP(build_model(cfg, rank), device_ids=[rank])
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(train_set, batch_size=cfg.batch_size, sampler=sampler, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss(ignore_index=255)

    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        model.train()
        running = 0.0
        for images, masks in loader:
            images, masks = images.cuda(rank, non_blocking=True), masks.cuda(rank, non_blocking=True)
            loss = criterion(model(images), masks)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item()
        if rank == 0:
            print(f"epoch {epoch}: loss {running / len(loader):.4f}")
            torch.save({"model": model.module.state_dict()}, f"{cfg.out_dir}/seg_{epoch}.pth")
    dist.destroy_process_group()


def launch(cfg, train_set):
    world_size = torch.cuda.device_count()
    mp.spawn(main_worker, args=(world_size, cfg, train_set), nprocs=world_size, join=True)
