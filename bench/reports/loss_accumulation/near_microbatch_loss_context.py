# Source: https://github.com/ServiceNow/Fast-LLM/pull/486
# Report: loss tensors returned by the head's forward/backward were appended to context.losses for logging, keeping each microbatch's autograd node alive; ~164 MiB grew per microbatch until OOM
# Shape: fixed as in the PR: the runner keeps only detached running sums per loss name (total += loss.detach()), reduced to Python floats at step end
# Expect: near-miss: must be silent
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F


@dataclass
class StepContext:
    losses: dict = field(default_factory=dict)
    num_microbatches: int = 0


class LanguageModelHead(torch.nn.Module):
    def __init__(self, hidden, vocab, z_loss_weight=1e-4):
        super().__init__()
        self.proj = torch.nn.Linear(hidden, vocab, bias=False)
        self.z_loss_weight = z_loss_weight

    def forward_backward(self, hidden_states, labels, grad_scale):
        logits = self.proj(hidden_states)
        lm_loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        total_loss = lm_loss + self.z_loss_weight * z_loss
        (total_loss * grad_scale).backward()
        return total_loss, {"lm_loss": lm_loss, "z_loss": z_loss}


class ScheduleRunner:
    def __init__(self, trunk, head, optimizer, loss_names=("lm_loss", "z_loss")):
        self.trunk = trunk
        self.head = head
        self.optimizer = optimizer
        self.loss_names = loss_names

    def run_step(self, microbatches):
        context = StepContext(losses={name: 0.0 for name in ("total",) + self.loss_names})
        self.optimizer.zero_grad(set_to_none=True)
        scale = 1.0 / len(microbatches)
        for tokens, labels in microbatches:
            hidden = self.trunk(tokens.cuda(non_blocking=True))
            total_loss, parts = self.head.forward_backward(hidden, labels.cuda(), scale)
            context.losses["total"] += total_loss.detach()
            for name in self.loss_names:
                context.losses[name] += parts[name].detach()
            context.num_microbatches += 1
        self.optimizer.step()
        return self._reduce_losses(context)

    @staticmethod
    def _reduce_losses(context):
        return {
            name: float(value) / max(context.num_microbatches, 1)
            for name, value in context.losses.items()
        }
