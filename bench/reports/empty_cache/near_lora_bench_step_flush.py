# Source: https://github.com/huggingface/peft/pull/2894
# Report: the MetaMathQA PEFT benchmark script called empty_cache() and gc.collect() after every training step; the PR measured the flushes as the main cost (250 steps: 108 s -> 65 s without gc.collect, 45 s without empty_cache) and stopped flushing every step
# Shape: same benchmark loop without the per-step gc.collect()/empty_cache() (the PR drops gc.collect entirely and flushes far less often); the cache is released once after training, before the test evaluation
# Expect: near-miss: must be silent
import gc
import json
import time

import torch


def print_verbose(msg):
    print(msg, flush=True)


def get_batch(ds, step, batch_size, tokenizer, device):
    rows = [ds[(step * batch_size + i) % len(ds)] for i in range(batch_size)]
    enc = tokenizer([r["query"] + r["response"] for r in rows], return_tensors="pt",
                    padding=True, truncation=True, max_length=768)
    enc["labels"] = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
    return {k: v.to(device) for k, v in enc.items()}


def train(model, tokenizer, ds_train, optimizer, lr_scheduler, cfg, device="cuda"):
    model.train()
    losses, durations = [], []
    mem_allocated, mem_reserved = [], []
    total_tokens = 0
    tic_start = time.perf_counter()

    for step in range(1, cfg["max_steps"] + 1):
        tic = time.perf_counter()
        batch = get_batch(ds_train, step, cfg["batch_size"], tokenizer, device)
        total_tokens += int(batch["attention_mask"].sum())

        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        if cfg.get("grad_norm_clip"):
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["grad_norm_clip"])
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()

        losses.append(loss.item())
        durations.append(time.perf_counter() - tic)
        mem_allocated.append(torch.cuda.memory_allocated() / 2**20)
        mem_reserved.append(torch.cuda.memory_reserved() / 2**20)

        if step % cfg["eval_steps"] == 0:
            log = {
                "step": step,
                "loss avg": f"{sum(losses[-cfg['eval_steps']:]) / cfg['eval_steps']:.4f}",
                "train tokens / sec": f"{total_tokens / sum(durations):.0f}",
                "mem reserved": f"{max(mem_reserved[-cfg['eval_steps']:]):.0f}",
                "elapsed time": f"{time.perf_counter() - tic_start:.0f}s",
            }
            print_verbose(json.dumps(log))

    print_verbose(f"Training finished after {cfg['max_steps']} steps.")
    gc.collect()
    torch.cuda.empty_cache()  # once, before the test-set evaluation
    return {
        "train_loss": losses,
        "train_time": time.perf_counter() - tic_start,
        "mem_allocated_avg": sum(mem_allocated) / len(mem_allocated),
        "mem_reserved_max": max(mem_reserved),
    }
