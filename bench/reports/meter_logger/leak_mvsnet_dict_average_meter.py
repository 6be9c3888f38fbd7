# Source: https://github.com/xy-guo/MVSNet_pytorch/blob/da1681488ddaa76cb95ea06f0281e84f3d08f679/train.py
# Report: audited idiom: MVSNet's train_sample converts every scalar with tensor2float(...) before it reaches DictAverageMeter; this variant drops the conversion (source note: meter: utils.py DictAverageMeter, tensor2float)
# Shape: train_sample returns the raw dict {"loss": loss, ...}; DictAverageMeter.update does `self.data[k] += v`, so each step's loss (and its graph) is chained into a meter that lives for the epoch
# Expect: TML001 line 70
import torch


class DictAverageMeter(object):
    def __init__(self):
        self.data = {}
        self.count = 0

    def update(self, new_input):
        self.count += 1
        if len(self.data) == 0:
            for k, v in new_input.items():
                self.data[k] = v
        else:
            for k, v in new_input.items():
                self.data[k] += v

    def mean(self):
        return {k: v / self.count for k, v in self.data.items()}


def tocuda(sample):
    return {k: (v.cuda() if isinstance(v, torch.Tensor) else v) for k, v in sample.items()}


def abs_depth_error(depth_est, depth_gt, mask):
    with torch.no_grad():
        return torch.mean((depth_est[mask] - depth_gt[mask]).abs())


def mvsnet_loss(depth_est, depth_gt, mask):
    mask = mask > 0.5
    return torch.nn.functional.smooth_l1_loss(depth_est[mask], depth_gt[mask], reduction='mean')


def train_sample(model, optimizer, sample, detailed_summary=False):
    model.train()
    optimizer.zero_grad()
    sample_cuda = tocuda(sample)
    depth_gt = sample_cuda["depth"]
    mask = sample_cuda["mask"]

    outputs = model(sample_cuda["imgs"], sample_cuda["proj_matrices"], sample_cuda["depth_values"])
    depth_est = outputs["depth"]
    loss = mvsnet_loss(depth_est, depth_gt, mask)
    loss.backward()
    optimizer.step()

    scalar_outputs = {"loss": loss}
    if detailed_summary:
        scalar_outputs["abs_depth_error"] = abs_depth_error(depth_est, depth_gt, mask > 0.5)
    return loss, scalar_outputs


def train(model, optimizer, lr_scheduler, TrainImgLoader, logger, args, start_epoch=0):
    for epoch_idx in range(start_epoch, args.epochs):
        avg_train_scalars = DictAverageMeter()
        for batch_idx, sample in enumerate(TrainImgLoader):
            global_step = len(TrainImgLoader) * epoch_idx + batch_idx
            do_summary = global_step % args.summary_freq == 0
            loss, scalar_outputs = train_sample(model, optimizer, sample, detailed_summary=do_summary)
            if do_summary:
                for key, value in scalar_outputs.items():
                    logger.add_scalar('train/' + key, float(value), global_step)
            # running average over the epoch for the progress line
            avg_train_scalars.update(scalar_outputs)  # expect: TML001
            print('Epoch {}/{}, Iter {}/{}, train loss = {:.3f}'.format(
                epoch_idx, args.epochs, batch_idx, len(TrainImgLoader), float(loss)))
        lr_scheduler.step()
        print("avg_train_scalars:", avg_train_scalars.mean())
