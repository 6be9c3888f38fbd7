# Source: https://github.com/WenmuZhou/PytorchOCR/blob/028bdeb20d3cf88d631dc8f3cc88adcc20ce0edc/tools/rec_train.py
# Report: PytorchOCR's CRNN recognition trainer feeds the CTC loss (read from the loss dict) into an AverageMeter whose __setitem__ does value_accumulate[key] += value[0]; the repository passes loss_dict['loss'].item()
# Shape: as in the repository: the meter receives loss_dict['loss'].item(), a Python float, so the defaultdict(float) only ever holds numbers; the acc / edit-distance entries are plain numbers from the metric
# Expect: near-miss: must be silent
from collections import defaultdict

import torch


class AverageMeter:
    """Running statistics keyed by name (average['loss'] = (value, count))."""

    def __init__(self):
        self.value_accumulate = defaultdict(float)
        self.total_count = defaultdict(int)

    def __setitem__(self, key, value):
        assert len(value) == 2
        self.value_accumulate[key] += value[0]
        self.total_count[key] += value[1]

    def __getitem__(self, key):
        return self.value_accumulate[key] / self.total_count[key]


class CTCLoss(torch.nn.Module):
    def __init__(self, blank_idx, reduction='mean'):
        super().__init__()
        self.loss_func = torch.nn.CTCLoss(blank=blank_idx, reduction=reduction, zero_infinity=True)

    def forward(self, pred, args):
        batch_size = pred.size(0)
        pred = pred.log_softmax(2).permute(1, 0, 2)
        preds_lengths = torch.tensor([pred.size(0)] * batch_size, dtype=torch.long)
        loss = self.loss_func(pred, args['targets'], preds_lengths, args['targets_lengths'])
        return {'loss': loss}


def train(net, optimizer, scheduler, loss_func, train_loader, to_use_device,
          converter, metric, train_options, start_epoch, logger):
    average = AverageMeter()
    all_step = len(train_loader)
    for epoch in range(start_epoch, train_options['epochs']):
        current_lr = scheduler.get_last_lr()[0]
        net.train()
        for i, batch_data in enumerate(train_loader):
            cur_batch_size = batch_data['img'].shape[0]
            targets, targets_lengths = converter.encode(batch_data['label'])
            batch_data['targets'] = targets
            batch_data['targets_lengths'] = targets_lengths

            optimizer.zero_grad()
            output = net.forward(batch_data['img'].to(to_use_device))
            loss_dict = loss_func(output, batch_data)
            loss_dict['loss'].backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5)
            optimizer.step()

            # statistic loss for print: only a Python float reaches the meter
            acc_dict = metric(output, batch_data['label'])
            average['acc'] = (acc_dict['n_correct'], cur_batch_size)
            average['norm_edit_dis'] = (acc_dict['norm_edit_dis'], cur_batch_size)
            average['loss'] = (loss_dict['loss'].item(), 1)
            if (i + 1) % train_options['print_interval'] == 0:
                logger.info(f"[{epoch}/{train_options['epochs']}] - [{i + 1}/{all_step}] - "
                            f"lr:{current_lr} - loss:{float(average['loss']):.4f} - "
                            f"acc:{average['acc']:.4f}")
        scheduler.step()
