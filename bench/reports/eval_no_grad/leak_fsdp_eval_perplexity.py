# Source: https://github.com/meta-llama/llama-recipes/blob/03f1ca78171ec3dbd0bdbd0b19ac97e334db1a6b/src/llama_recipes/utils/train_utils.py
# Report: audit of llama-recipes evaluation(), leaking variant it avoids: the same model.eval() loop without its torch.no_grad() block; every LM forward saves activations for a backward that never comes (peak grows with batch and sequence length), while eval_loss itself is still detached
# Shape: eval loop over the val loader after model.eval(), forward via model(**batch) with no grad-disabled context; losses detached, predictions decoded to strings
# Expect: TML003 line 23
import os

import torch
import torch.distributed as dist
from tqdm import tqdm


def evaluation(model, cfg, eval_loader, local_rank, tokenizer, wandb_run=None):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    model.eval()
    eval_preds = []
    step_losses = []
    step_ppl = []
    eval_loss = 0.0
    for step, batch in enumerate(tqdm(eval_loader, desc="evaluating", disable=local_rank != 0)):
        if cfg.max_eval_step > 0 and step >= cfg.max_eval_step:
            break
        batch = {k: v.to(local_rank) for k, v in batch.items()}
        out = model(**batch)  # expect: TML003
        loss = out.loss
        if cfg.save_metrics:
            step_losses.append(loss.detach().float().item())
            step_ppl.append(float(torch.exp(loss.detach().float())))
        eval_loss += loss.detach().float()
        preds = torch.argmax(out.logits, -1)
        eval_preds.extend(tokenizer.batch_decode(preds.detach().cpu().numpy(), skip_special_tokens=True))

    if world_size > 1:
        dist.all_reduce(eval_loss, op=dist.ReduceOp.SUM)
    eval_epoch_loss = eval_loss / len(eval_loader) / world_size
    eval_ppl = torch.exp(eval_epoch_loss)
    if local_rank == 0:
        print(f"eval ppl={float(eval_ppl):.4f} loss={float(eval_epoch_loss):.4f}")
    if wandb_run is not None:
        wandb_run.log({"eval/perplexity": float(eval_ppl), "eval/loss": float(eval_epoch_loss)}, commit=False)
    return eval_ppl, eval_epoch_loss, step_losses, step_ppl, eval_preds


def track_best(model, cfg, eval_loader, local_rank, tokenizer, state, save_fn):
    eval_ppl, eval_loss, _, _, _ = evaluation(model, cfg, eval_loader, local_rank, tokenizer)
    model.train()
    if eval_loss < state["best_val_loss"]:
        state["best_val_loss"] = eval_loss
        state["bad_epochs"] = 0
        save_fn(model)
    else:
        state["bad_epochs"] += 1
    state["val_ppl"].append(float(eval_ppl))
    return state["bad_epochs"] >= cfg.patience
