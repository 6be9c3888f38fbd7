# Source: https://github.com/pytorch/torchtitan/issues/763
# Report: the training loop kept every step's loss on the device in losses_since_last_log until the next log step; with logging disabled or infrequent, memory slowly grew
# Shape: the loss (graph-attached, after backward) is appended each step to a history list bound before the loop; it is only cleared inside the rarely-taken log branch
# Expect: TML001 line 44
import time

import torch
from torch.distributed.device_mesh import DeviceMesh


def dist_mean(x: float, mesh: DeviceMesh) -> float:
    t = torch.tensor(x).cuda()
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.AVG, group=mesh.get_group())
    return t.item()


def train(model, loss_fn, optimizers, lr_schedulers, data_iterator, train_state, job_config, logger, mesh=None):
    losses_since_last_log = []
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

        losses_since_last_log.append(loss)  # expect: TML001

        if train_state.step == 1 or train_state.step % job_config.metrics.log_freq == 0:
            losses = [l.item() for l in losses_since_last_log]
            avg_loss, max_loss = sum(losses) / len(losses), max(losses)
            if mesh is not None:
                avg_loss = dist_mean(avg_loss, mesh)
            train_state.log_steps.append(train_state.step)
            train_state.global_avg_losses.append(avg_loss)
            train_state.global_max_losses.append(max_loss)

            elapsed = time.perf_counter() - time_last_log
            logger.info(
                f"step: {train_state.step:2}  loss: {avg_loss:7.4f}  "
                f"wps: {ntokens_since_last_log / elapsed:,.0f}  "
                f"data: {sum(data_loading_times) / len(data_loading_times):.3f}s"
            )
            losses_since_last_log.clear()
            ntokens_since_last_log = 0
            data_loading_times.clear()
            time_last_log = time.perf_counter()
