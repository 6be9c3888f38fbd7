# Source: https://github.com/ZichengLiu-seu/basic-MyGO/blob/1164483d32d5abc2aa497ffed3a9b4a3470a5ee5/scripts/test.py
# Report: (fixed variant) the same multi-task test pass run under @torch.no_grad(), with the evaluator keeping Python floats for the error sums and detached CPU rows for the route plots
# Shape: a metric object with counters on self; __call__ takes .item() of the MSE and norm, and extends self.pred with rows of reg_out.detach().cpu(), so nothing on the GPU outlives a batch
# Expect: near-miss: must be silent
import logging

import torch
import torch.nn.functional as F


class MultiTaskEvaluator:
    """Accumulates classification counts and regression errors over the test set."""

    def __init__(self, threshold=0.5):
        self.threshold = threshold
        self.count = 0
        self.tp = self.fp = self.tn = self.fn = 0
        self.sq_err = 0.0
        self.dist_err = 0.0
        self.pred = []
        self.gt = []

    def __call__(self, cls_out, reg_out, cls_target, reg_target):
        self.count += cls_out.size(0)
        hard = (cls_out.squeeze(1) > self.threshold).int()
        truth = cls_target.int()
        self.tp += ((hard == 1) & (truth == 1)).sum().item()
        self.fp += ((hard == 1) & (truth == 0)).sum().item()
        self.tn += ((hard == 0) & (truth == 0)).sum().item()
        self.fn += ((hard == 0) & (truth == 1)).sum().item()
        self.sq_err += F.mse_loss(reg_out, reg_target).item()
        self.dist_err += torch.linalg.norm(reg_out - reg_target, dim=-1).sum().item()
        reg_cpu, target_cpu = reg_out.detach().cpu(), reg_target.cpu()
        self.pred.extend(reg_cpu[i] for i in range(reg_cpu.size(0)))
        self.gt.extend(target_cpu[i] for i in range(target_cpu.size(0)))

    def summary(self):
        acc = (self.tp + self.tn) / max(1, self.count)
        precision = self.tp / (self.tp + self.fp + 1e-10)
        recall = self.tp / (self.tp + self.fn + 1e-10)
        f1 = 2 * precision * recall / (precision + recall + 1e-10)
        return acc, f1, self.sq_err / self.count, self.dist_err / self.count


@torch.no_grad()
def test_multitask(args, model, test_loader):
    evaluator = MultiTaskEvaluator()
    model.eval()
    for batch in test_loader:
        x, reg_target, cls_target = (t.cuda() for t in batch)
        cls_out, reg_out = model(x)
        evaluator(cls_out, reg_out, cls_target, reg_target)
    acc, f1, mse, dist = evaluator.summary()
    logging.info(
        "lr %g | accuracy %.2f%% | F1 %.4f | MSE %.4f m^2 | mean dist %.4f m",
        args.learning_rate, acc * 100, f1, mse, dist,
    )
    pred = torch.stack(evaluator.pred)
    true = torch.stack(evaluator.gt)
    return pred, true
