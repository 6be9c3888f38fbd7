# Source: https://github.com/STVIR/pysot/blob/14d81894566b1a9ce28ca0e05b431e49819dbce3/tools/train.py
# Report: audited correct idiom: SiamRPN++ training reduces every entry of the model's outputs dict with average_reduce(v.data.item()) before batch_info goes into the AverageMeter
# Shape: as in the repository: each outputs entry is turned into a float by v.data.item() before average_reduce, so batch_info and the meter's running sums hold plain numbers
# Expect: near-miss: must be silent
import time

import torch
import torch.distributed as dist
from torch.nn.utils import clip_grad_norm_


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def average_reduce(v):
    if get_world_size() == 1:
        return v
    tensor = torch.cuda.FloatTensor(1)
    tensor[0] = v
    dist.all_reduce(tensor)
    return tensor[0] / get_world_size()


class AverageMeter:
    """Running sums over the last `num` updates, one per keyword."""

    def __init__(self, num=100):
        self.num = num
        self.val, self.sum, self.count, self.history = {}, {}, {}, {}

    def update(self, batch=1, **kwargs):
        for k, v in kwargs.items():
            self.val[k] = v / float(batch)
            if k not in self.sum:
                self.sum[k], self.count[k], self.history[k] = 0, 0, []
            self.sum[k] += v
            self.count[k] += batch
            self.history[k].append(self.val[k])
            while len(self.history[k]) > self.num:
                self.sum[k] -= self.history[k].pop(0)
                self.count[k] -= 1

    def avg(self, k):
        return float(self.sum[k]) / self.count[k]


def is_valid_number(x):
    return x == x and abs(x) < 1e4


def train(train_loader, model, optimizer, tb_writer, cfg):
    average_meter = AverageMeter()
    end = time.time()
    for idx, data in enumerate(train_loader):
        data_time = average_reduce(time.time() - end)

        outputs = model(data)
        loss = outputs['total_loss']

        if is_valid_number(loss.data.item()):
            optimizer.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), cfg.TRAIN.GRAD_CLIP)
            optimizer.step()

        batch_time = time.time() - end
        batch_info = {}
        batch_info['batch_time'] = average_reduce(batch_time)
        batch_info['data_time'] = average_reduce(data_time)
        for k, v in sorted(outputs.items()):
            batch_info[k] = average_reduce(v.data.item())

        average_meter.update(**batch_info)

        if (idx + 1) % cfg.TRAIN.PRINT_FREQ == 0:
            info = "iter {}".format(idx + 1)
            for k in batch_info:
                info += " {}: {:.4f}".format(k, average_meter.avg(k))
            print(info)
        end = time.time()
