# Source: https://github.com/chrisociepa/allamo/blob/2062af2e0113a7b5f638100050536548c0d4ce66/allamo/trainer/dpo_fsdp_trainer.py
# Report: allamo's DPO trainer (PR #14 added log-prob metrics) detaches the rewards/logps and calls .item() before handing them to MetricsLogger; this rewrite hands the live reward tensors to a buffering logger
# Shape: forward() of the DPO trainer builds a metrics dict from graph-attached reward/logp means and passes it to self.metrics_logger.log_metrics, whose body appends the dict to self.pending (never cleared): every step's DPO graph (both policy forwards) stays alive
# Expect: TML001 line 67
import torch
import torch.nn.functional as F


def get_log_prob(logits, target_ids, ignore_index):
    labels = target_ids.clone()
    loss_mask = labels != ignore_index
    labels[labels == ignore_index] = 0
    log_probs = F.log_softmax(logits, dim=-1)
    per_token_logps = torch.gather(log_probs, -1, labels.unsqueeze(-1)).squeeze(-1)
    return (per_token_logps * loss_mask).sum(-1)


class MetricsLogger:
    """Buffers metrics and ships them to wandb every `flush_every` iterations."""

    def __init__(self, run=None, flush_every=50):
        self.run = run
        self.flush_every = flush_every
        self.pending = []

    def log_metrics(self, metrics):
        self.pending.append(metrics)
        if self.run is not None and len(self.pending) % self.flush_every == 0:
            self.run.log(self.pending[-1])


class DPOTrainer:
    def __init__(self, config, model, metrics_logger):
        self.config = config
        self.model = model
        self.metrics_logger = metrics_logger
        self.gradient_accumulation_steps = config.gradient_accumulation_steps
        self.iter_num = 0

    def forward(self, batch, last_micro_step):
        policy_chosen_logits, _, _ = self.model(input_ids=batch["chosen_input_ids"], target_ids=batch["chosen_target_ids"])
        policy_rejected_logits, _, _ = self.model(input_ids=batch["rejected_input_ids"], target_ids=batch["rejected_target_ids"])
        policy_chosen_logps = get_log_prob(policy_chosen_logits, batch["chosen_target_ids"], self.config.ignore_index)
        policy_rejected_logps = get_log_prob(policy_rejected_logits, batch["rejected_target_ids"], self.config.ignore_index)

        reference_chosen_logps = batch["reference_chosen_logps"]
        reference_rejected_logps = batch["reference_rejected_logps"]

        chosen_rewards = self.config.dpo_chosen_beta * (policy_chosen_logps - reference_chosen_logps)
        rejected_rewards = self.config.dpo_rejected_beta * (policy_rejected_logps - reference_rejected_logps)
        dpo_loss = -F.logsigmoid(chosen_rewards - rejected_rewards).mean()
        if self.gradient_accumulation_steps > 1:
            dpo_loss = dpo_loss / self.gradient_accumulation_steps

        if last_micro_step and self.iter_num % self.config.log_interval == 0:
            reward_accuracies = (chosen_rewards > rejected_rewards).float().mean()
            reward_margins = (chosen_rewards - rejected_rewards).mean()
            step_metrics = {
                "iter": self.iter_num,
                "dpo/rewards/accuracies": reward_accuracies,
                "dpo/rewards/margins": reward_margins,
                "dpo/rewards/chosen": chosen_rewards.mean(),
                "dpo/rewards/rejected": rejected_rewards.mean(),
                "dpo/logps/chosen": policy_chosen_logps.mean(),
                "dpo/logps/rejected": policy_rejected_logps.mean(),
            }
            self.metrics_logger.log_metrics(step_metrics)  # expect: TML001
        return dpo_loss


def train(trainer, optimizer, loader):
    for step, batch in enumerate(loader):
        loss = trainer.forward(batch, last_micro_step=True)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        trainer.iter_num += 1
