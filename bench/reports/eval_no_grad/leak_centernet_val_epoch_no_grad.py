# Source: https://github.com/xingyizhou/CenterNet/blob/8ef87b433529ac8f8bd4f95707f6bc05052c55e9/src/lib/trains/base_trainer.py
# Report: Audited idiom: BaseTrainer.run_epoch for phase val calls model_with_loss.eval() and torch.cuda.empty_cache() and runs the forward with no grad context of its own; it is safe only because main.py calls trainer.val(epoch, val_loader) inside `with torch.no_grad():`. (source note: caller: src/main.py wraps trainer.val in torch.no_grad())
# Shape: Fork splits validation into a forward-only val_epoch (eval(), loop over val loader, model_with_loss(batch), meters use .item()) and the epoch loop calls it without the no_grad wrapper: activations are saved every val step for a backward that never comes.
# Expect: TML003 line 60

import time

import torch
from progress.bar import Bar


class AverageMeter(object):
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


class ModelWithLoss(torch.nn.Module):
    def __init__(self, model, loss):
        super(ModelWithLoss, self).__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch):
        outputs = self.model(batch['input'])
        loss, loss_stats = self.loss(outputs, batch)
        return outputs[-1], loss, loss_stats


class CtdetTrainer(object):
    def __init__(self, opt, model, loss, loss_stats, optimizer=None):
        self.opt = opt
        self.optimizer = optimizer
        self.loss_stats = loss_stats
        self.model_with_loss = ModelWithLoss(model, loss)

    def val_epoch(self, epoch, data_loader):
        # fork: validation split out of run_epoch so it can skip the optimizer branch
        model_with_loss = self.model_with_loss
        model_with_loss.eval()
        torch.cuda.empty_cache()
        avg_loss_stats = {l: AverageMeter() for l in self.loss_stats}
        results = {}
        bar = Bar('{}/{}'.format(self.opt.task, self.opt.exp_id), max=len(data_loader))
        for iter_id, batch in enumerate(data_loader):
            for k in batch:
                if k != 'meta':
                    batch[k] = batch[k].to(device=self.opt.device, non_blocking=True)
            output, loss, loss_stats = model_with_loss(batch)  # expect: TML003
            for l in avg_loss_stats:
                avg_loss_stats[l].update(loss_stats[l].mean().item(), batch['input'].size(0))
            if self.opt.test:
                self.save_result(output, batch, results)
            bar.next()
            del output, loss, loss_stats
        bar.finish()
        return {k: v.avg for k, v in avg_loss_stats.items()}, results

    def save_result(self, output, batch, results):
        hm = output['hm'].sigmoid_().detach().cpu().numpy()
        results[batch['meta']['img_id'][0]] = hm


def main_loop(opt, trainer, train_epoch, train_loader, val_loader, logger):
    best = 1e10
    for epoch in range(1, opt.num_epochs + 1):
        log_dict_train = train_epoch(epoch, train_loader)
        logger.write('epoch: {} | train loss {:8f}'.format(epoch, log_dict_train['loss']))
        if opt.val_intervals > 0 and epoch % opt.val_intervals == 0:
            log_dict_val, preds = trainer.val_epoch(epoch, val_loader)
            for k, v in log_dict_val.items():
                logger.scalar_summary('val_{}'.format(k), v, epoch)
            if log_dict_val['loss'] < best:
                best = log_dict_val['loss']
    return best
