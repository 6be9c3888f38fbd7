# Source: https://github.com/CaptainEven/MCMOT/blob/02c602895c44763932961c6ce74b47ca7ccb0d03/src/lib/trains/base_trainer.py
# Report: CenterNet/FairMOT-style multi-class MOT trainer: run_epoch feeds every loss term of the loss dict into one AverageMeter per term (the repo reduces each with .mean().item() first).
# Shape: one edit from the repo: loss_stats[l].mean() (graph-attached) is passed to AverageMeter.update, whose sum += val * n chains every batch's loss graph for the whole epoch in the meters that run_epoch keeps.
# Expect: TML001 line 86
import time

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class ModelWithLoss(nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch):
        outputs = self.model(batch["input"])
        loss, loss_stats = self.loss(outputs=outputs, batch=batch)
        return outputs[-1], loss, loss_stats


class MotTrainer:
    loss_names = ["loss", "hm_loss", "wh_loss", "off_loss", "id_loss"]

    def __init__(self, opt, model, loss, optimizer):
        self.opt = opt
        self.optimizer = optimizer
        self.loss = loss
        self.model_with_loss = ModelWithLoss(model, loss)
        self.optimizer.add_param_group({"params": self.loss.parameters()})

    def set_device(self, device):
        self.model_with_loss = self.model_with_loss.to(device)
        for state in self.optimizer.state.values():
            for k, v in state.items():
                if isinstance(v, torch.Tensor):
                    state[k] = v.to(device=device, non_blocking=True)

    def run_epoch(self, phase, epoch, data_loader):
        model_with_loss = self.model_with_loss
        if phase == "train":
            model_with_loss.train()
        else:
            model_with_loss.eval()
        data_time, batch_time = AverageMeter(), AverageMeter()
        avg_loss_stats = {name: AverageMeter() for name in self.loss_names}
        num_iters = len(data_loader) if self.opt.num_iters < 0 else self.opt.num_iters
        end = time.time()
        for iter_id, batch in enumerate(data_loader):
            if iter_id >= num_iters:
                break
            data_time.update(time.time() - end)
            for k in batch:
                if k != "meta":
                    batch[k] = batch[k].to(device=self.opt.device, non_blocking=True)

            output, loss, loss_stats = model_with_loss(batch)
            loss = loss.mean()
            if phase == "train":
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

            batch_time.update(time.time() - end)
            end = time.time()
            suffix = f"{phase}: [{epoch}][{iter_id}/{num_iters}] "
            for name in avg_loss_stats:
                avg_loss_stats[name].update(loss_stats[name].mean(), batch["input"].size(0))  # expect: TML001
                suffix += f"|{name} {float(avg_loss_stats[name].avg):.4f} "
            if self.opt.print_iter > 0 and iter_id % self.opt.print_iter == 0:
                print(suffix + f"|Data {data_time.avg:.3f}s |Net {batch_time.avg:.3f}s")
            del output, loss, loss_stats, batch

        ret = {k: float(v.avg) for k, v in avg_loss_stats.items()}
        ret["time"] = batch_time.sum / 60.0
        return ret

    def train(self, epoch, data_loader):
        return self.run_epoch("train", epoch, data_loader)

    def val(self, epoch, data_loader):
        with torch.no_grad():
            return self.run_epoch("val", epoch, data_loader)
