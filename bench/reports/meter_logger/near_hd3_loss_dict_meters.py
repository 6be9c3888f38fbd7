# Source: https://github.com/ucbdrive/hd3/blob/d3e0cba1110c018ca3bbf2bdf9e1631d02a04e7a/train.py
# Report: audited correct idiom: HD^3 flow/stereo training feeds every entry of the model's returned output['loss'] dict into a per-loss AverageMeter, but only after .mean().data
# Shape: as in the repository: the loss terms travel model() -> output dict -> .items() -> meter.update() as .mean().data, so the meters hold detached GPU scalars and no graph
# Expect: near-miss: must be silent
import time

import torch


class AverageMeter(object):
    """Computes and stores the average and current value"""

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


def train(train_loader, model, optimizer, epoch, batch_size, writer, args):
    batch_time = AverageMeter()
    loss_meter = None

    model.train()
    end = time.time()
    for i, (img_list, label_list) in enumerate(train_loader):
        if img_list[0].shape[0] < batch_size:
            continue
        current_iter = (epoch - 1) * len(train_loader) + i + 1

        img_list = [img.to(torch.device("cuda")) for img in img_list]
        label_list = [label.to(torch.device("cuda")) for label in label_list]

        output = model(img_list=img_list, label_list=label_list, get_loss=True)
        total_loss = output['loss']['total'].sum()

        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()

        if loss_meter is None:
            loss_meter = {k: AverageMeter() for k in output['loss']}
        for loss_type, loss_value in output['loss'].items():
            loss_meter[loss_type].update(loss_value.mean().data, img_list[0].size(0))

        batch_time.update(time.time() - end)
        end = time.time()
        if (i + 1) % args.print_freq == 0:
            for loss_type, meter in loss_meter.items():
                print('Epoch {} [{}/{}] Loss {} {:.4f} ({:.4f})'.format(
                    epoch, i + 1, len(train_loader), loss_type,
                    meter.val.item(), meter.avg.item()))

        writer.add_scalar('total_loss_train_batch',
                          loss_meter['total'].val.item(), current_iter)

    return loss_meter['total'].avg.item()
