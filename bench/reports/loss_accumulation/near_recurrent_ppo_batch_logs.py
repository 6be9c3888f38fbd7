# Source: https://github.com/lcswillems/torch-ac/blob/b6602c8ce843a8bfe9cef1723d0151dd7a3c22c3/torch_ac/algos/ppo.py
# Report: audit: recurrent PPO sums the loss over `recurrence` sub-steps (memory carried with its graph, restarted from stored detached memories) and backpropagates once per batch; the per-batch log values are taken with .item(); the variant it avoided sums the value loss tensor and appends it to the epoch log
# Shape: as in the repository: batch_loss (memory carried with its graph across the recurrence sub-steps) is the accumulator that gets backward(); the logged value loss is summed with .item(), so the epoch log holds floats
# Expect: near-miss: must be silent
from dataclasses import dataclass

import numpy
import torch


@dataclass
class SubBatch:
    obs: torch.Tensor
    action: torch.Tensor
    log_prob: torch.Tensor
    value: torch.Tensor
    advantage: torch.Tensor
    returnn: torch.Tensor
    mask: torch.Tensor


class RecurrentPPO:
    def __init__(self, acmodel, lr=1e-3, recurrence=4, epochs=4, batch_size=256, clip_eps=0.2,
                 entropy_coef=0.01, value_loss_coef=0.5, max_grad_norm=0.5):
        self.acmodel, self.recurrence, self.epochs = acmodel, recurrence, epochs
        self.batch_size, self.clip_eps = batch_size, clip_eps
        self.entropy_coef, self.value_loss_coef, self.max_grad_norm = entropy_coef, value_loss_coef, max_grad_norm
        self.optimizer = torch.optim.Adam(acmodel.parameters(), lr, eps=1e-8)

    def _starting_indexes(self, num_frames):
        starts = numpy.random.permutation(numpy.arange(0, num_frames, self.recurrence))
        per_batch = self.batch_size // self.recurrence
        return [starts[i:i + per_batch] for i in range(0, len(starts), per_batch)]

    def update_parameters(self, exps, memories):
        for _ in range(self.epochs):
            log_entropies, log_value_losses = [], []
            for inds in self._starting_indexes(len(exps.obs)):
                batch_entropy, batch_value_loss, batch_loss = 0, 0, 0
                memory = memories[inds]
                for i in range(self.recurrence):
                    sb = SubBatch(*(getattr(exps, k)[inds + i] for k in SubBatch.__dataclass_fields__))
                    dist, value, memory = self.acmodel(sb.obs, memory * sb.mask)
                    entropy = dist.entropy().mean()
                    ratio = torch.exp(dist.log_prob(sb.action) - sb.log_prob)
                    clipped = torch.clamp(ratio, 1.0 - self.clip_eps, 1.0 + self.clip_eps)
                    policy_loss = -torch.min(ratio * sb.advantage, clipped * sb.advantage).mean()
                    v_clip = sb.value + torch.clamp(value - sb.value, -self.clip_eps, self.clip_eps)
                    value_loss = torch.max((value - sb.returnn).pow(2), (v_clip - sb.returnn).pow(2)).mean()
                    loss = policy_loss - self.entropy_coef * entropy + self.value_loss_coef * value_loss

                    batch_entropy += entropy.item()
                    batch_value_loss += value_loss.item()
                    batch_loss += loss
                    if i < self.recurrence - 1:
                        memories[inds + i + 1] = memory.detach()

                batch_loss /= self.recurrence
                self.optimizer.zero_grad()
                batch_loss.backward()
                torch.nn.utils.clip_grad_norm_(self.acmodel.parameters(), self.max_grad_norm)
                self.optimizer.step()
                log_entropies.append(batch_entropy / self.recurrence)
                log_value_losses.append(batch_value_loss / self.recurrence)

        return {
            "entropy": numpy.mean(log_entropies),
            "value_loss": numpy.mean(log_value_losses),
        }
