# Source: https://github.com/rabbityl/lepard/issues/12
# Report: memory grows until the run is killed; a commenter traced it to AverageMeter.update() being fed the raw loss tensors of each training step (lib/trainer.py)
# Shape: a dict of meters built at the first step outlives the epoch loop; update() adds the graph-attached loss into self.sum, so every step's graph stays alive
# Expect: TML001 line 82
import torch
from tensorboardX import SummaryWriter
from tqdm import tqdm


class AverageMeter(object):
    """Running mean / variance of a scalar."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0.0
        self.sq_sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
        self.sq_sum += val ** 2 * n
        self.var = self.sq_sum / self.count - self.avg ** 2


class Trainer(object):
    def __init__(self, cfg, model, criterion, optimizer, scheduler, loaders):
        self.cfg = cfg
        self.device = cfg.device
        self.model = model.to(self.device)
        self.loss = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.loader = loaders
        self.iter_size = cfg.iter_size
        self.verbose_freq = cfg.verbose_freq
        self.writer = SummaryWriter(log_dir=cfg.tboard_dir)

    def run_batch(self, inputs, phase):
        inputs["phase"] = phase
        if phase == "train":
            self.model.train()
            data = self.model(inputs)
            loss_info = self.loss(data)
            loss_info["loss"].backward()
        else:
            self.model.eval()
            with torch.no_grad():
                data = self.model(inputs)
                loss_info = self.loss(data)
        return loss_info

    def run_epoch(self, epoch, phase):
        stats_meter = None
        num_iter = len(self.loader[phase].dataset) // self.loader[phase].batch_size
        batches = iter(self.loader[phase])

        self.optimizer.zero_grad()
        for c_iter in tqdm(range(num_iter)):
            inputs = next(batches)
            for k, v in inputs.items():
                if isinstance(v, list):
                    inputs[k] = [item.to(self.device) for item in v]
                elif torch.is_tensor(v):
                    inputs[k] = v.to(self.device)

            loss_info = self.run_batch(inputs, phase)

            if (c_iter + 1) % self.iter_size == 0 and phase == "train":
                self.optimizer.step()
                self.optimizer.zero_grad()

            if stats_meter is None:
                stats_meter = {key: AverageMeter() for key in loss_info}
            for key, value in loss_info.items():
                stats_meter[key].update(value)  # expect: TML001

            if phase == "train" and (c_iter + 1) % self.verbose_freq == 0:
                step = num_iter * (epoch - 1) + c_iter
                for key, meter in stats_meter.items():
                    self.writer.add_scalar(f"{phase}/{key}", meter.avg, step)

        msg = f"{phase} Epoch: {epoch} "
        for key, meter in stats_meter.items():
            msg += f"{key}: {meter.avg:.2f}\t"
        print(msg)
        return stats_meter

    def train(self):
        best = 1e5
        for epoch in range(1, self.cfg.max_epoch):
            self.run_epoch(epoch, "train")
            self.scheduler.step()
            stats = self.run_epoch(epoch, "val")
            if stats["loss"].avg < best:
                best = stats["loss"].avg
                torch.save({"state_dict": self.model.state_dict()}, "best.pth")
