# Source: https://github.com/trypag/torchmed/blob/248e04f26ffa4751889ebd2f22e35a6f45d32dbd/examples/02_segmentation_NonAdjLoss/train.py
# Report: fixed variant of the audited train(): the NonAdjLoss term is logged as nonadjloss.item(), like the CE and Dice terms next to it (also: report: https://github.com/trypag/torchmed/issues/6)
# Shape: same dict-of-meters logger and the same MetricLogger.update (self.sum += val * n), but every value handed to a meter is a Python float (.item()), so the persistent meters never hold a graph
# Expect: near-miss: must be silent
import math

import torch


class MetricLogger(object):
    """Compute and store the average and current value"""

    def __init__(self, id_name, display_name, raw_format="{:.2e}", avg_format="{:.3e}"):
        self.reset()
        self.id_name = id_name
        self.display_name = display_name
        self.raw_format = raw_format
        self.avg_format = avg_format

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


class LoggerPlotter(object):
    def __init__(self):
        self.metrics = {}

    def add_metric(self, metric_list):
        for m in metric_list:
            self.metrics[m.id_name] = m

    def clear_metrics(self):
        for metric in self.metrics.values():
            metric.reset()

    def print_metrics(self, epoch, it, total):
        parts = [f"{m.display_name}={m.avg}" for m in self.metrics.values()]
        print(f"[{epoch} {it}/{total}] " + " | ".join(parts))


def train(train_loader, nonadj_config, model, adjacency_layer, criterion, dice_loss,
          optimizer, epoch, logger, print_freq=10):
    logger.clear_metrics()
    gt_graph, nb_conn_ab_max, lambda_coef, activate_nonadjloss = nonadj_config

    for i, (_, img, target) in enumerate(train_loader):
        target_gpu = target.cuda()
        output = model(img.cuda())

        ce = criterion(output, target_gpu)
        dice = 5 * dice_loss(output.exp(), target_gpu, -1)

        # labels non-adjacency matrix evaluated from the segmentation output
        nonadjloss = adjacency_layer(output.exp()) * gt_graph
        nonadjloss = (nonadjloss.sum() / nb_conn_ab_max) * lambda_coef

        loss = ce + dice
        if activate_nonadjloss:
            loss += nonadjloss
        else:
            nonadjloss.detach_()

        if math.isnan(loss.item()):
            raise ValueError("Loss is NaN")

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        logger.metrics["ce"].update(ce.data.item(), img.size(0))
        logger.metrics["dice"].update(dice.data.item(), img.size(0))
        logger.metrics["nonadjloss"].update(nonadjloss.item(), img.size(0))

        if i % print_freq == 0:
            logger.print_metrics(epoch, i, len(train_loader))


def main(train_loader, model, adjacency_layer, criterion, dice_loss, optimizer, config, epochs):
    logger = LoggerPlotter()
    logger.add_metric([
        MetricLogger("ce", "CE Loss"),
        MetricLogger("dice", "Dice Loss"),
        MetricLogger("nonadjloss", "NonAdjLoss"),
    ])
    for epoch in range(epochs):
        train(train_loader, config, model, adjacency_layer, criterion, dice_loss,
              optimizer, epoch, logger)
