# Source: https://github.com/pytorch/torchtitan/issues/763
# Report: the training loop kept every step's loss on the device in losses_since_last_log until the next log step; with logging disabled or infrequent, memory slowly grew
# Shape: the fix: no per-step history; only on a log step is the current loss detached and reduced to a Python float
# Expect: near-miss: must be silent
import time

import torch
from torch.distributed.device_mesh import DeviceMesh


def dist_reduce(x: torch.Tensor, op, mesh: DeviceMesh) -> float:
    assert x.numel() == 1
    x = x.clone()
    torch.distributed.all_reduce(x, op=op, group=mesh.get_group())
    return x.item()


def train(model, loss_fn, optimizers, lr_schedulers, data_iterator, train_state, job_config, logger, mesh=None):
    ntokens_since_last_log = 0
    data_loading_times = []
    time_last_log = time.perf_counter()

    while train_state.step < job_config.training.steps:
        train_state.step += 1

        t0 = time.perf_counter()
        input_ids, labels = next(data_iterator)
        ntokens_since_last_log += labels.numel()
        data_loading_times.append(time.perf_counter() - t0)

        input_ids = input_ids.cuda()
        labels = labels.cuda()
        optimizers.zero_grad()

        pred = model(input_ids)
        loss = loss_fn(pred, labels)
        del pred
        loss.backward()

        torch.nn.utils.clip_grad_norm_(model.parameters(), job_config.training.max_norm)
        optimizers.step()
        lr_schedulers.step()

        if train_state.step == 1 or train_state.step % job_config.metrics.log_freq == 0:
            if mesh is not None:
                loss = loss.detach()
                avg_loss = dist_reduce(loss, torch.distributed.ReduceOp.AVG, mesh)
                max_loss = dist_reduce(loss, torch.distributed.ReduceOp.MAX, mesh)
            else:
                avg_loss = max_loss = loss.item()
            train_state.log_steps.append(train_state.step)
            train_state.global_avg_losses.append(avg_loss)
            train_state.global_max_losses.append(max_loss)

            elapsed = time.perf_counter() - time_last_log
            logger.info(
                f"step: {train_state.step:2}  loss: {avg_loss:7.4f}  "
                f"wps: {ntokens_since_last_log / elapsed:,.0f}  "
                f"data: {sum(data_loading_times) / len(data_loading_times):.3f}s"
            )
            ntokens_since_last_log = 0
            data_loading_times.clear()
            time_last_log = time.perf_counter()
