# Source: https://github.com/karpathy/build-nanogpt/blob/6104ab1b53920f6e2159749676073ff7d815c1fa/train_gpt2.py
# Report: audit of the build-nanogpt DDP pretraining loop, leaking variant it avoids: the outer optimizer-step loop loses its single optimizer.zero_grad(); the inner micro_step loop keeps calling backward(), so every step's .grad holds the sum of all previous steps' micro-batches (wrong updates, no reset anywhere in the loop)
# Shape: outer optimizer-step loop with no gradient reset, inner micro-batch loop accumulates loss.detach() into loss_accum and backprops, dist.all_reduce(loss_accum, AVG) kept; validation every N steps under torch.no_grad()
# Expect: TML002 line 69
import math
import os
import time

import torch
import torch.distributed as dist


def cosine_lr(it, max_lr, min_lr, warmup, max_steps):
    if it < warmup:
        return max_lr * (it + 1) / warmup
    if it > max_steps:
        return min_lr
    ratio = (it - warmup) / (max_steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


def evaluate(model, val_loader, device, steps=20):
    model.eval()
    val_loader.reset()
    with torch.no_grad():
        val_loss = torch.zeros((), device=device)
        for _ in range(steps):
            x, y = val_loader.next_batch()
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                _, loss = model(x.to(device), y.to(device))
            val_loss += loss.detach() / steps
    if dist.is_initialized():
        dist.all_reduce(val_loss, op=dist.ReduceOp.AVG)
    return val_loss.item()


def pretrain(model, raw_model, optimizer, train_loader, val_loader, cfg, device, log_dir="log"):
    ddp = dist.is_initialized()
    master = not ddp or dist.get_rank() == 0
    world = dist.get_world_size() if ddp else 1
    grad_accum_steps = cfg.total_batch_size // (cfg.B * cfg.T * world)
    for step in range(cfg.max_steps):
        t0 = time.time()
        last_step = step == cfg.max_steps - 1
        if step % cfg.eval_every == 0 or last_step:
            val_loss = evaluate(model, val_loader, device)
            if master and step > 0 and last_step:
                torch.save({"model": raw_model.state_dict(), "step": step, "val_loss": val_loss},
                           os.path.join(log_dir, f"model_{step:05d}.pt"))

        model.train()
        loss_accum = 0.0
        for micro_step in range(grad_accum_steps):
            x, y = train_loader.next_batch()
            x, y = x.to(device), y.to(device)
            if ddp:
                model.require_backward_grad_sync = micro_step == grad_accum_steps - 1
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                _, loss = model(x, y)
            loss = loss / grad_accum_steps
            loss_accum += loss.detach()
            loss.backward()
        if ddp:
            dist.all_reduce(loss_accum, op=dist.ReduceOp.AVG)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        lr = cosine_lr(step, cfg.max_lr, cfg.max_lr * 0.1, cfg.warmup_steps, cfg.max_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()  # expect: TML002
        torch.cuda.synchronize()
        if master:
            dt = time.time() - t0
            print(f"step {step:5d} | loss {loss_accum.item():.6f} | lr {lr:.4e} | norm {norm:.4f} | {dt * 1000:.1f}ms")
