# Source: https://github.com/microsoft/LMOps/blob/main/minillm/finetune.py
# Report: MiniLLM KD fine-tuning loop (DeepSpeed engine) logs lm/distil losses accumulated between log intervals
# Shape: teacher forward under no_grad inside get_distil_loss; after all_reduce every logged value goes through .item() before the += into the running totals
# Expect: near-miss: must be silent
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def get_distil_loss(teacher_model, model_batch, no_model_batch, logits):
    with torch.no_grad():
        teacher_model.eval()
        teacher_logits = teacher_model(**model_batch, use_cache=False).logits
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    inf_mask = torch.isinf(logits)
    logprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    prod = torch.masked_fill(teacher_probs * logprobs, inf_mask, 0)
    x = torch.sum(prod, dim=-1).view(-1)
    mask = (no_model_batch["label"] != -100).int().view(-1)
    return -torch.sum(x * mask, dim=0) / torch.sum(mask, dim=0)


def evaluate(model, dataloader, device):
    loss_func = nn.CrossEntropyLoss()
    model.eval()
    all_loss, steps = 0.0, 0
    with torch.no_grad():
        for model_batch, no_model_batch in dataloader:
            logits = model(**model_batch).logits
            loss = loss_func(logits.view(-1, logits.shape[-1]), no_model_batch["label"].view(-1))
            dist.all_reduce(loss, dist.ReduceOp.SUM)
            all_loss += (loss / dist.get_world_size()).item()
            steps += 1
    return all_loss / max(steps, 1)


def finetune(args, model, lr_scheduler, train_dataloader, dev_dataloader, device, teacher_model=None):
    # model is a deepspeed.DeepSpeedEngine: model.step() also clears the gradients
    loss_func = nn.CrossEntropyLoss()
    world = dist.get_world_size()
    step, global_step = 1, 1
    total_loss, total_distil_loss, total_time = 0.0, 0.0, 0.0
    for epoch in range(args.epochs):
        model.train()
        for model_batch, no_model_batch in train_dataloader:
            torch.cuda.synchronize()
            st = time.time()
            logits = model(**model_batch, use_cache=False).logits
            lm_loss = loss_func(logits.float().view(-1, logits.shape[-1]), no_model_batch["label"].view(-1))
            if teacher_model is not None:
                distil_loss = get_distil_loss(teacher_model, model_batch, no_model_batch, logits)
                loss = (1 - args.kd_ratio) * lm_loss + args.kd_ratio * distil_loss
            else:
                loss = lm_loss
            model.backward(loss)
            model.step()

            dist.all_reduce(loss, dist.ReduceOp.SUM)
            global_loss = loss.item() / world
            global_distil_loss = 0
            if teacher_model is not None:
                dist.all_reduce(distil_loss, dist.ReduceOp.SUM)
                global_distil_loss = distil_loss.item() / world
                total_distil_loss += global_distil_loss
            torch.cuda.synchronize()
            total_loss += global_loss
            total_time += time.time() - st

            if global_step % args.log_interval == 0 and step % args.gradient_accumulation_steps == 0:
                n = args.log_interval * args.gradient_accumulation_steps
                print(f"train | epoch {epoch} | loss {total_loss / n:.4f} | ds_loss {total_distil_loss / n:.4f} "
                      f"| lr {lr_scheduler.get_last_lr()[0]:.4e} | time {total_time / args.log_interval:.3f}")
                total_loss, total_distil_loss, total_time = 0.0, 0.0, 0.0

            if args.eval_interval and global_step % args.eval_interval == 0:
                print("dev loss", evaluate(model, dev_dataloader, device))
                model.train()

            step += 1
            if step % args.gradient_accumulation_steps == 0:
                global_step += 1
            if global_step > args.total_iters:
                break
    return model
