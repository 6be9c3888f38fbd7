# Source: https://github.com/belatijagad/uncertainty-demonstrated-feedback/blob/018dd3b35083ef40b20b1bf5829e51e812028ae0/src/alignment/trainers/dpo.py
# Report: audited idiom: DPOTrainer._get_batch_metrics builds its metrics dict with .item() and BaseTrainer hands that dict to every callback's on_step_end (and collects it per batch in evaluate)
# Shape: the loss is put in the metrics dict as the tensor itself; a history callback keeps every step's dict, so each step's graph (policy logits) stays reachable; evaluate also keeps one CUDA scalar per batch
# Expect: TML001 line 77; TML004 line 87
from collections import defaultdict

import torch
import torch.nn.functional as F
from tqdm import tqdm


class TrainerCallback:
    def on_step_end(self, step, metrics, trainer):
        pass


class MetricsHistoryCallback(TrainerCallback):
    def __init__(self):
        self.history = []

    def on_step_end(self, step, metrics, trainer):
        self.history.append({"step": step, **metrics})


class DPOTrainer:
    def __init__(self, policy, ref_policy, config, train_dataloader, eval_dataloader,
                 optimizer, scheduler, callbacks=None):
        self.model = policy
        self.ref_policy = ref_policy
        self.config = config
        self.train_dataloader = train_dataloader
        self.eval_dataloader = eval_dataloader
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.callbacks = callbacks if callbacks is not None else [MetricsHistoryCallback()]
        self.device = "cuda"
        self.step_counter = 0

    def _get_batch_metrics(self, batch, train_eval):
        policy_chosen_logps, policy_rejected_logps = self._concatenated_forward(self.model, batch)
        with torch.inference_mode():
            ref_chosen_logps, ref_rejected_logps = self._concatenated_forward(self.ref_policy, batch)
        beta = self.config.model.beta
        logits = (policy_chosen_logps - policy_rejected_logps) - (ref_chosen_logps - ref_rejected_logps)
        loss = -F.logsigmoid(beta * logits).mean()
        chosen_rewards = (beta * (policy_chosen_logps - ref_chosen_logps)).detach()
        rejected_rewards = (beta * (policy_rejected_logps - ref_rejected_logps)).detach()
        prefix = "eval_" if train_eval == "eval" else ""
        metrics = {
            f"{prefix}loss": loss,
            f"{prefix}rewards/chosen": chosen_rewards.mean().item(),
            f"{prefix}rewards/rejected": rejected_rewards.mean().item(),
        }
        return loss, metrics

    def _concatenated_forward(self, model, batch):
        ids = torch.cat([batch["chosen_input_ids"], batch["rejected_input_ids"]], dim=0)
        all_logits = model(input_ids=ids).logits
        all_logps = all_logits.log_softmax(-1).max(-1).values.sum(-1)
        n = batch["chosen_input_ids"].shape[0]
        return all_logps[:n], all_logps[n:]

    def train(self, num_train_steps):
        data_iterator = iter(self.train_dataloader)
        self.optimizer.zero_grad()
        for i in range(num_train_steps):
            batch = next(data_iterator)
            batch = {k: v.to(self.device) for k, v in batch.items() if isinstance(v, torch.Tensor)}
            loss, metrics = self._get_batch_metrics(batch, "train")
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            self.step_counter += 1
            for cb in self.callbacks:
                cb.on_step_end(step=self.step_counter, metrics=metrics, trainer=self)  # expect: TML001

    def evaluate(self):
        self.model.eval()
        all_metrics = defaultdict(list)
        with torch.inference_mode():
            for batch in tqdm(self.eval_dataloader, desc="Evaluating"):
                batch = {k: v.to(self.device) for k, v in batch.items() if isinstance(v, torch.Tensor)}
                _, metrics = self._get_batch_metrics(batch, "eval")
                for key, value in metrics.items():
                    all_metrics[key].append(value)  # expect: TML004
        final_metrics = {key: torch.tensor(values).mean().item() for key, values in all_metrics.items()}
        self.model.train()
        return final_metrics
