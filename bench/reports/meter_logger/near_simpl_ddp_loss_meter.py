# Source: https://github.com/HKUST-Aerial-Robotics/SIMPL/blob/40eff741d0138a85954aa8eb8be071f48fdac9ef/train_ddp.py
# Report: SIMPL's torchrun DDP trainer feeds the whole loss dict (including the graph-attached 'loss' it just backpropagated) to an AverageMeterForDict every step; validation all-gathers the metric means across ranks
# Shape: AverageMeterForDict.update() hands each value to AverageMeter.update(), which turns tensors into floats with val.detach().cpu().item() before self.sum += val * n, so nothing graph-attached outlives the step
# Expect: near-miss: must be silent
import os
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if isinstance(val, torch.Tensor):
            val = val.detach().cpu().item()
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class AverageMeterForDict(object):
    def __init__(self):
        self.metrics = {}

    def update(self, elem, n=1):
        for key, val in elem.items():
            if key not in self.metrics:
                self.metrics[key] = AverageMeter()
            self.metrics[key].update(val, n)

    def get_info(self):
        return ' '.join('{}: {:.3f}'.format(k, m.avg) for k, m in self.metrics.items())


def distributed_mean(tensor):
    output_tensors = [tensor.clone() for _ in range(dist.get_world_size())]
    dist.all_gather(output_tensors, tensor)
    return torch.stack(output_tensors, dim=0).mean(0)


def save_ckpt(net, opt, epoch, save_dir, filename):
    os.makedirs(save_dir, exist_ok=True)
    state_dict = {k: v.cpu() for k, v in net.state_dict().items()}
    torch.save({"epoch": epoch, "state_dict": state_dict, "opt_state": opt.state_dict()},
               os.path.join(save_dir, filename))


def train(args, train_set, val_set, net, loss_fn, optimizer, evaluator, log):
    local_rank = int(os.environ['LOCAL_RANK'])
    device = torch.device("cuda", local_rank)
    is_main = local_rank == 0
    dl_train = DataLoader(train_set, batch_size=args.train_batch_size, collate_fn=train_set.collate_fn,
                          sampler=DistributedSampler(train_set), drop_last=True, pin_memory=True)
    dl_val = DataLoader(val_set, batch_size=args.val_batch_size, collate_fn=val_set.collate_fn,
                        sampler=DistributedSampler(val_set), drop_last=True, pin_memory=True)
    best_metric = 1e6
    for epoch in range(args.train_epoches):
        dist.barrier()
        dl_train.sampler.set_epoch(epoch)
        start = time.time()
        train_loss_meter = AverageMeterForDict()
        train_eval_meter = AverageMeterForDict()
        net.train()
        for data in dl_train:
            data_in = net.module.pre_process(data)
            out = net(data_in)
            loss_out = loss_fn(out, data)
            eval_out = evaluator.evaluate(net.module.post_process(out), data)

            optimizer.zero_grad()
            loss_out['loss'].backward()
            optimizer.step()

            train_loss_meter.update(loss_out)
            train_eval_meter.update(eval_out)
        log('[Training] Avg. loss: {:.6}, {:.3} mins'.format(
            train_loss_meter.metrics['loss'].avg, (time.time() - start) / 60.0))

        dist.barrier()
        if (epoch + 1) % args.val_interval == 0:
            with torch.no_grad():
                dl_val.sampler.set_epoch(epoch)
                val_eval_meter = AverageMeterForDict()
                net.eval()
                for data in dl_val:
                    out = net(net.module.pre_process(data))
                    val_eval_meter.update(evaluator.evaluate(net.module.post_process(out), data))
                eval_res = [m.avg for m in val_eval_meter.metrics.values()]
                eval_mean = distributed_mean(torch.from_numpy(np.array(eval_res)).to(device))
                val_eval = {k: eval_mean[i].item() for i, k in enumerate(val_eval_meter.metrics)}
            if is_main and val_eval[args.rank_metric] < best_metric:
                best_metric = val_eval[args.rank_metric]
                save_ckpt(net.module, optimizer, epoch, 'saved_models/', 'simpl_ddp_best.tar')
