# Source: https://github.com/xy-guo/MVSNet_pytorch/blob/da1681488ddaa76cb95ea06f0281e84f3d08f679/train.py
# Report: audited idiom: MVSNet's train_sample converts every scalar with tensor2float(...) (recursive `.data.item()`) before it reaches DictAverageMeter (source note: meter: utils.py DictAverageMeter, tensor2float)
# Shape: same loop and same meter (`self.data[k] += v`), but train_sample returns tensor2float(loss), tensor2float(scalar_outputs): only Python floats are kept
# Expect: near-miss: must be silent
import torch


def make_recursive_func(func):
    def wrapper(vars):
        if isinstance(vars, list):
            return [wrapper(x) for x in vars]
        elif isinstance(vars, tuple):
            return tuple([wrapper(x) for x in vars])
        elif isinstance(vars, dict):
            return {k: wrapper(v) for k, v in vars.items()}
        return func(vars)
    return wrapper


@make_recursive_func
def tensor2float(vars):
    if isinstance(vars, float):
        return vars
    elif isinstance(vars, torch.Tensor):
        return vars.data.item()
    raise NotImplementedError("invalid input type {} for tensor2float".format(type(vars)))


class DictAverageMeter(object):
    def __init__(self):
        self.data = {}
        self.count = 0

    def update(self, new_input):
        self.count += 1
        for k, v in new_input.items():
            if not isinstance(v, float):
                raise NotImplementedError("invalid data {}: {}".format(k, type(v)))
            if k not in self.data:
                self.data[k] = v
            else:
                self.data[k] += v

    def mean(self):
        return {k: v / self.count for k, v in self.data.items()}


def mvsnet_loss(depth_est, depth_gt, mask):
    mask = mask > 0.5
    return torch.nn.functional.smooth_l1_loss(depth_est[mask], depth_gt[mask], reduction='mean')


def train_sample(model, optimizer, sample, detailed_summary=False):
    model.train()
    optimizer.zero_grad()
    sample_cuda = {k: v.cuda() for k, v in sample.items()}
    depth_gt = sample_cuda["depth"]
    mask = sample_cuda["mask"]

    outputs = model(sample_cuda["imgs"], sample_cuda["proj_matrices"], sample_cuda["depth_values"])
    depth_est = outputs["depth"]
    loss = mvsnet_loss(depth_est, depth_gt, mask)
    loss.backward()
    optimizer.step()

    scalar_outputs = {"loss": loss}
    if detailed_summary:
        with torch.no_grad():
            scalar_outputs["abs_depth_error"] = torch.mean((depth_est - depth_gt).abs()[mask > 0.5])
    return tensor2float(loss), tensor2float(scalar_outputs)


def train(model, optimizer, lr_scheduler, TrainImgLoader, logger, args, start_epoch=0):
    for epoch_idx in range(start_epoch, args.epochs):
        avg_train_scalars = DictAverageMeter()
        for batch_idx, sample in enumerate(TrainImgLoader):
            global_step = len(TrainImgLoader) * epoch_idx + batch_idx
            do_summary = global_step % args.summary_freq == 0
            loss, scalar_outputs = train_sample(model, optimizer, sample, detailed_summary=do_summary)
            if do_summary:
                for key, value in scalar_outputs.items():
                    logger.add_scalar('train/' + key, value, global_step)
            # running average over the epoch for the progress line
            avg_train_scalars.update(scalar_outputs)
            print('Epoch {}/{}, Iter {}/{}, train loss = {:.3f}'.format(
                epoch_idx, args.epochs, batch_idx, len(TrainImgLoader), loss))
        lr_scheduler.step()
        print("avg_train_scalars:", avg_train_scalars.mean())
