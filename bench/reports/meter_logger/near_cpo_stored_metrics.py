# Source: https://github.com/huggingface/trl/pull/1531
# Report: CPO trainer leaked memory because one logged metric (the NLL loss) kept its autograd graph while the trainer stored per-step metrics until the next log call
# Shape: the fixed trainer: every value in the metrics dict is detached (nll_loss included) before store_metrics() keeps it in the dict-of-lists history
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn.functional as F
from transformers import Trainer


class PreferenceTrainer(Trainer):
    def __init__(self, *args, beta=0.1, alpha=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.beta = beta
        self.alpha = alpha
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    @staticmethod
    def _sequence_logps(logits, labels):
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        mask = labels != -100
        labels[~mask] = 0
        per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
        return (per_token * mask).sum(-1) / mask.sum(-1)

    def concatenated_forward(self, model, batch):
        n = batch["chosen_input_ids"].shape[0]
        input_ids = torch.cat([batch["chosen_input_ids"], batch["rejected_input_ids"]], dim=0)
        attention = torch.cat([batch["chosen_attention_mask"], batch["rejected_attention_mask"]], dim=0)
        labels = torch.cat([batch["chosen_labels"], batch["rejected_labels"]], dim=0)
        logits = model(input_ids=input_ids, attention_mask=attention).logits
        logps = self._sequence_logps(logits, labels)
        nll_loss = F.cross_entropy(
            logits[:n, :-1].flatten(0, 1), labels[:n, 1:].flatten(), ignore_index=-100
        )
        return logps[:n], logps[n:], logits[:n], logits[n:], nll_loss

    def cpo_loss(self, chosen_logps, rejected_logps):
        logits = chosen_logps - rejected_logps
        losses = -F.logsigmoid(self.beta * logits)
        chosen_rewards = self.beta * chosen_logps.detach()
        rejected_rewards = self.beta * rejected_logps.detach()
        return losses, chosen_rewards, rejected_rewards

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        metrics = {}
        policy_chosen_logps, policy_rejected_logps, _, _, policy_nll_loss = self.concatenated_forward(model, batch)
        losses, chosen_rewards, rejected_rewards = self.cpo_loss(policy_chosen_logps, policy_rejected_logps)
        loss = losses.mean() + self.alpha * policy_nll_loss
        reward_accuracies = (chosen_rewards > rejected_rewards).float()

        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.mean().cpu()
        metrics[f"{prefix}rewards/rejected"] = rejected_rewards.mean().cpu()
        metrics[f"{prefix}rewards/accuracies"] = reward_accuracies.mean().cpu()
        metrics[f"{prefix}logps/chosen"] = policy_chosen_logps.detach().mean().cpu()
        metrics[f"{prefix}logps/rejected"] = policy_rejected_logps.detach().mean().cpu()
        metrics[f"{prefix}nll_loss"] = policy_nll_loss.detach().mean().cpu()
        return loss, metrics

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return (loss, metrics) if return_outputs else loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs, *args, **kwargs):
        train_eval = "train" if "loss" in logs else "eval"
        for key, values in self._stored_metrics[train_eval].items():
            logs[key] = torch.tensor(values).mean().item()
        del self._stored_metrics[train_eval]
        return super().log(logs, *args, **kwargs)
