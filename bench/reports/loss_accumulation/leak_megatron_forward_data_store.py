# Source: https://github.com/verl-project/verl/pull/7874
# Report: Megatron pipeline schedule keeps one grad-attached model_output dict per micro-batch in forward_data_store until the mini-batch ends, so residency grows with num_micro_batches
# Shape: a partial(loss_func) returns (loss, {"model_output": {log_probs, entropy}}); the schedule loop appends that dict to forward_data_store every micro-batch
# Expect: TML001 line 42
from functools import partial

import torch
import torch.nn.functional as F


def logprobs_from_logits(logits, labels):
    logp = F.log_softmax(logits.float(), dim=-1)
    return torch.gather(logp, -1, labels.unsqueeze(-1)).squeeze(-1)


class MegatronPPOActor:
    def __init__(self, actor_module, config):
        self.actor_module = actor_module
        self.config = config

    def _loss_func(self, batch, logits):
        log_probs = logprobs_from_logits(logits, batch["responses"])
        entropy = -(F.softmax(logits, -1) * F.log_softmax(logits, -1)).sum(-1)
        ratio = torch.exp(log_probs - batch["old_log_probs"])
        loss = -(ratio * batch["advantages"]).mean()
        if self.config.entropy_coeff:
            loss = loss - self.config.entropy_coeff * entropy.mean()
        model_output = {"log_probs": log_probs, "entropy": entropy}
        return loss, {"model_output": model_output, "loss": loss.detach().item()}

    def _forward_step(self, batch_iter, model):
        batch = next(batch_iter)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        return logits, partial(self._loss_func, batch)

    def forward_backward_batch(self, micro_batches):
        batch_iter = iter(micro_batches)
        forward_data_store = []
        for _ in range(len(micro_batches)):
            logits, loss_func = self._forward_step(batch_iter, self.actor_module)
            loss, reported = loss_func(logits)
            forward_data_store.append(reported)  # expect: TML001
            (loss / len(micro_batches)).backward()
        return forward_data_store

    def update_policy(self, dataloader, optimizer):
        metrics = []
        for micro_batches in dataloader:
            optimizer.zero_grad()
            outputs = self.forward_backward_batch(micro_batches)
            optimizer.step()
            metrics.append([o["loss"] for o in outputs])
        return metrics
