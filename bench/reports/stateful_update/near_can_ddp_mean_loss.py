# Source: https://github.com/zgzhengSEU/CAN-distributed-pytorch/blob/a56f28bb9d3901294fad0f22c43dd45cf21193e9/multi_train_utils/train_eval_utils.py
# Report: DDP crowd-counting trainer (torchrun, one process per GPU) all-reduces each step's MSE loss with reduce_value() and folds it into a running mean_loss tensor that rank 0 shows in tqdm
# Shape: reduce_value() all-reduces the loss in place under no_grad, which leaves it graph-attached; the running mean reads loss.detach(), so mean_loss stays a plain 1-element tensor; evaluate() is @torch.no_grad and sums .data
# Expect: near-miss: must be silent
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_value(value, average=True):
    world_size = get_world_size()
    if world_size < 2:
        return value
    with torch.no_grad():
        dist.all_reduce(value)
        if average:
            value /= world_size
    return value


def train_one_epoch(model, optimizer, train_loader, device, epoch):
    model.train()
    criterion = torch.nn.MSELoss(reduction='sum').to(device)
    mean_loss = torch.zeros(1).to(device)
    optimizer.zero_grad()

    if is_main_process():
        train_loader = tqdm(train_loader, file=sys.stdout)

    for step, (img, gt_dmap) in enumerate(train_loader):
        img = img.to(device)
        gt_dmap = gt_dmap.to(device)
        et_dmap = model(img)
        loss = criterion(et_dmap, gt_dmap)
        loss.backward()
        loss = reduce_value(loss, average=True)
        mean_loss = (mean_loss * step + loss.detach()) / (step + 1)

        if is_main_process():
            train_loader.desc = "[epoch {}] mean loss {}".format(epoch, round(mean_loss.item(), 3))

        if not torch.isfinite(loss):
            print('WARNING: non-finite loss, ending training ', loss)
            sys.exit(1)

        optimizer.step()
        optimizer.zero_grad()

    if device != torch.device("cpu"):
        torch.cuda.synchronize(device)
    return mean_loss.item()


@torch.no_grad()
def evaluate(model, test_loader, device):
    model.eval()
    mae = torch.zeros(1).to(device)
    for img, gt_dmap in test_loader:
        img = img.to(device)
        gt_dmap = gt_dmap.to(device)
        et_dmap = model(img)
        mae += torch.abs(et_dmap.data.sum() - gt_dmap.data.sum())
    if device != torch.device("cpu"):
        torch.cuda.synchronize(device)
    return reduce_value(mae, average=False).item()


def main(build_model, build_loaders, epochs, lr):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    train_loader, test_loader, train_sampler = build_loaders()
    model = DDP(build_model().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.95)

    best_mae = float("inf")
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        mean_loss = train_one_epoch(model, optimizer, train_loader, device, epoch)
        mae = evaluate(model, test_loader, device) / len(test_loader.dataset)
        if is_main_process():
            print("[epoch {}] loss {:.3f} MAE {:.2f}".format(epoch, mean_loss, mae))
            if mae < best_mae:
                best_mae = mae
                torch.save(model.module.state_dict(), "./weights/best.pth")
    dist.destroy_process_group()
