# Source: https://github.com/Goekdeniz-Guelmez/mlx-lm-lora/pull/47
# Report: all RL trainers (GRPO, DPO, ORPO, PPO ...) did `accumulated_metrics[k] += v` for the metrics dict returned by the loss every step; the accumulators kept an ever-growing graph until the next report (14 GB -> 25.8 GB by step 500, OOM ~step 550). MLX lazy graph in the original; this PyTorch port keeps the autograd graph the same way (source note: trainer shape: https://github.com/Goekdeniz-Guelmez/mlx-lm-lora/blob/a65a3f15bb431b536c4a868e0a744385a82cb6c2/mlx_lm_lora/trainer/dpo_trainer.py)
# Shape: a DPO loss helper returns (loss, metrics) where the reward/logp metrics are computed from the policy log-probs and stay graph-attached; the train loop sums every metric into a dict that lives until the report step
# Expect: TML001 line 60
from collections import defaultdict

import torch
import torch.nn.functional as F


def get_logps(model, input_ids, attention_mask, labels):
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
    labels = labels[:, 1:]
    mask = labels != -100
    per_token = torch.gather(logits.log_softmax(-1), 2, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (per_token * mask).sum(-1), mask.sum()


def dpo_loss(policy, ref_model, batch, beta):
    chosen_logps, chosen_toks = get_logps(policy, batch["chosen_ids"], batch["chosen_mask"], batch["chosen_labels"])
    rejected_logps, rejected_toks = get_logps(policy, batch["rejected_ids"], batch["rejected_mask"], batch["rejected_labels"])
    with torch.no_grad():
        ref_chosen, _ = get_logps(ref_model, batch["chosen_ids"], batch["chosen_mask"], batch["chosen_labels"])
        ref_rejected, _ = get_logps(ref_model, batch["rejected_ids"], batch["rejected_mask"], batch["rejected_labels"])

    chosen_rewards = beta * (chosen_logps - ref_chosen)
    rejected_rewards = beta * (rejected_logps - ref_rejected)
    loss = -F.logsigmoid(chosen_rewards - rejected_rewards).mean()
    metrics = {
        "rewards_chosen": chosen_rewards.mean(),
        "rewards_rejected": rejected_rewards.mean(),
        "reward_margins": (chosen_rewards - rejected_rewards).mean(),
        "logps_chosen": chosen_logps.mean(),
        "logps_rejected": rejected_logps.mean(),
        "accuracies": (chosen_rewards > rejected_rewards).float().mean(),
    }
    return loss, chosen_toks + rejected_toks, metrics


def train_dpo(policy, ref_model, optimizer, train_loader, args):
    policy.train()
    ref_model.eval()
    losses = 0.0
    n_tokens = 0
    accumulated_metrics = defaultdict(float)
    steps = 0
    for it, batch in enumerate(train_loader, start=1):
        batch = {k: v.to(args.device) for k, v in batch.items()}
        loss, toks, metrics = dpo_loss(policy, ref_model, batch, args.beta)
        (loss / args.grad_accum).backward()
        if it % args.grad_accum == 0:
            torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        losses += loss.item()
        n_tokens += int(toks)
        steps += 1
        for k, v in metrics.items():
            accumulated_metrics[k] += v  # expect: TML001

        if it % args.steps_per_report == 0:
            report = {k: float(v) / steps for k, v in accumulated_metrics.items()}
            print(f"Iter {it}: loss {losses / steps:.3f}, tokens {n_tokens}, {report}")
            losses, n_tokens, steps = 0.0, 0, 0
            accumulated_metrics = defaultdict(float)
