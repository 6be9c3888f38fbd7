# Source: https://github.com/Liuhong99/Sophia/blob/14bedd6a2ace4fef02dadd228a805374085cd65b/train_sophiag.py
# Report: correct code: nanoGPT-style SophiaG training; every hess_interval steps a Gauss-Newton-Bartlett pass (labels sampled from the model) refreshes the diagonal Hessian
# Shape: estimate_loss() is decorated with @torch.no_grad(), switches to eval and stores loss.item() into a CPU tensor; both training branches backward and zero_grad(set_to_none=True) every step
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F


def make_estimate_loss(model, get_batch, ctx, eval_iters):
    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    return estimate_loss


def train(model, optimizer, get_batch, ctx, cfg):
    estimate_loss = make_estimate_loss(model, get_batch, ctx, cfg.eval_iters)
    iter_num, best_val_loss = 0, 1e9
    hessian_norm = 0.0
    X, Y = get_batch("train")
    t0 = time.time()
    while iter_num <= cfg.max_iters:
        if iter_num % cfg.eval_interval == 0:
            losses = estimate_loss()
            print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if losses["val"] < best_val_loss:
                best_val_loss = losses["val"]
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter_num": iter_num}, "ckpt.pt")

        for micro_step in range(cfg.gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
            X, Y = get_batch("train")
            (loss / cfg.gradient_accumulation_steps).backward()
        if cfg.grad_clip != 0.0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if iter_num % cfg.log_interval == 0:
            lossf = loss.item()
            dt = time.time() - t0
            t0 = time.time()
            print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms, hessian l1 {hessian_norm:.3e}")
        iter_num += 1

        if iter_num % cfg.hess_interval == cfg.hess_interval - 1:
            for micro_step in range(cfg.gradient_accumulation_steps):
                with ctx:
                    logits, _ = model(X, 0)
                X, Y = get_batch("train")
                y_sample = torch.distributions.Categorical(logits=logits).sample()
                loss_sampled = F.cross_entropy(logits.view(-1, logits.size(-1)), y_sample.view(-1), ignore_index=-1)
                (loss_sampled / cfg.gradient_accumulation_steps).backward()
            optimizer.update_hessian()
            optimizer.zero_grad(set_to_none=True)
            hessian_norm = 0.0
            for state in optimizer.state.values():
                hessian_norm += state["hessian"].detach().norm(1).item()
