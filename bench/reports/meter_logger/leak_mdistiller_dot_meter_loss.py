# Source: https://github.com/megvii-research/mdistiller/blob/a08d46f10d6102bd6e3f258ca5ac880b020ea259/mdistiller/engine/trainer.py
# Report: DOT (distillation-oriented trainer) runs a retaining KD backward then the CE backward each step; the repository feeds the loss meter with (loss_ce + loss_kd).cpu().detach().numpy().mean(). This variant passes the summed loss tensor to the meter.
# Shape: AverageMeter.update does self.sum += val * n, so the graph-attached loss_ce + loss_kd (whose KD branch still holds the buffers kept by retain_graph=True) is chained into a per-epoch running sum that lives until the epoch ends.
# Expect: TML001 line 87
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        _, pred = output.topk(max(topk), 1, True, True)
        correct = pred.t().eq(target.reshape(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in topk]


class KDDistiller(nn.Module):
    def __init__(self, student, teacher, temperature=4.0, ce_weight=1.0, kd_weight=1.0):
        super().__init__()
        self.student, self.teacher = student, teacher
        self.temperature, self.ce_weight, self.kd_weight = temperature, ce_weight, kd_weight

    def train(self, mode=True):
        self.training = mode
        self.student.train(mode)
        self.teacher.eval()
        return self

    def forward(self, image, target):
        logits_student = self.student(image)
        with torch.no_grad():
            logits_teacher = self.teacher(image)
        t = self.temperature
        loss_kd = F.kl_div(F.log_softmax(logits_student / t, dim=1), F.softmax(logits_teacher / t, dim=1),
                           reduction="batchmean") * t * t
        losses = {"loss_ce": self.ce_weight * F.cross_entropy(logits_student, target),
                  "loss_kd": self.kd_weight * loss_kd}
        return logits_student, losses


class DOTOptimizer(torch.optim.SGD):
    @torch.no_grad()
    def step_kd(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


class DOTTrainer:
    def __init__(self, distiller, train_loader, lr=0.05):
        self.distiller = distiller.cuda()
        self.train_loader = train_loader
        self.optimizer = DOTOptimizer(distiller.student.parameters(), lr=lr, momentum=0.9)

    def train_iter(self, data, epoch, meters):
        start = time.time()
        image, target = data
        image, target = image.float().cuda(non_blocking=True), target.cuda(non_blocking=True)
        preds, losses_dict = self.distiller(image=image, target=target)
        loss_ce, loss_kd = losses_dict["loss_ce"].mean(), losses_dict["loss_kd"].mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss_kd.backward(retain_graph=True)
        self.optimizer.step_kd()
        self.optimizer.zero_grad(set_to_none=True)
        loss_ce.backward()
        self.optimizer.step()
        meters["training_time"].update(time.time() - start)
        batch_size = image.size(0)
        acc1, acc5 = accuracy(preds, target, topk=(1, 5))
        meters["losses"].update(loss_ce + loss_kd, batch_size)  # expect: TML001
        meters["top1"].update(acc1[0], batch_size)
        meters["top5"].update(acc5[0], batch_size)
        return f"Epoch:{epoch}| Loss:{float(meters['losses'].avg):.4f}| Top-1:{float(meters['top1'].avg):.3f}"

    def train_epoch(self, epoch):
        meters = {k: AverageMeter() for k in ("training_time", "losses", "top1", "top5")}
        self.distiller.train()
        for data in self.train_loader:
            msg = self.train_iter(data, epoch, meters)
        print(msg)
        return meters["losses"].avg
