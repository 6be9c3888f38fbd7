# Source: https://github.com/meta-llama/llama-recipes/blob/03f1ca78171ec3dbd0bdbd0b19ac97e334db1a6b/src/llama_recipes/utils/train_utils.py
# Report: audit of the llama-recipes FSDP fine-tuning loop: correct in a tricky way: total_loss is a tensor summed every micro-batch and later all-reduced across ranks, but each term is loss.detach().float(), so no graph is kept
# Shape: epoch total stays a CUDA tensor (needed for dist.all_reduce) and grows by a detached copy of the scaled out.loss; GradScaler steps on a (step + 1) % accum counter
# Expect: near-miss: must be silent
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
from tqdm import tqdm


def train(model, train_loader, optimizer, lr_scheduler, accum_steps, cfg, local_rank, rank):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    scaler = torch.cuda.amp.GradScaler() if cfg.use_fp16 else None
    autocast = torch.cuda.amp.autocast if cfg.use_fp16 else nullcontext
    history = {"train_loss": [], "train_ppl": [], "epoch_time": []}

    for epoch in range(cfg.num_epochs):
        started = time.perf_counter()
        model.train()
        total_loss = 0.0
        pbar = tqdm(total=len(train_loader) // accum_steps, desc=f"epoch {epoch + 1}", disable=rank != 0)
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(local_rank) for k, v in batch.items()}
            with autocast():
                out = model(**batch)
            loss = out.loss / accum_steps
            total_loss += loss.detach().float()
            last_micro = step == len(train_loader) - 1
            if scaler is not None:
                scaler.scale(loss).backward()
                if (step + 1) % accum_steps == 0 or last_micro:
                    if cfg.clip_norm > 0:
                        scaler.unscale_(optimizer)
                        model.clip_grad_norm_(cfg.clip_norm)
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
                    pbar.update(1)
            else:
                loss.backward()
                if (step + 1) % accum_steps == 0 or last_micro:
                    if cfg.clip_norm > 0:
                        model.clip_grad_norm_(cfg.clip_norm)
                    optimizer.step()
                    optimizer.zero_grad()
                    pbar.update(1)
            pbar.set_description(f"epoch {epoch + 1} step {step} loss {loss.detach().float():.4f}")
        pbar.close()

        if world_size > 1:
            dist.all_reduce(total_loss, op=dist.ReduceOp.SUM)
        epoch_loss = total_loss / len(train_loader) / world_size
        history["train_loss"].append(float(epoch_loss))
        history["train_ppl"].append(float(torch.exp(epoch_loss)))
        history["epoch_time"].append(time.perf_counter() - started)
        lr_scheduler.step()
        if rank == 0:
            print(f"epoch {epoch + 1}: loss={float(epoch_loss):.4f} ppl={history['train_ppl'][-1]:.3f}")
    return history
