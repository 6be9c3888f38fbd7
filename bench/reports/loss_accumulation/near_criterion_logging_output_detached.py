# Source: https://github.com/facebookresearch/fairseq/issues/2255
# Report: the fix stores `loss.data` (the maintainers preferred `.detach()`) in the logging_output, so the kept dicts no longer hold the graph.
# Shape: same criterion and trainer that keeps every logging_output for the epoch summary; the dict holds a detached loss.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLmCriterion(nn.Module):
    def __init__(self, padding_idx):
        super().__init__()
        self.padding_idx = padding_idx

    def forward(self, model, sample):
        masked = sample["target"].ne(self.padding_idx)
        logits = model(sample["net_input"], masked_tokens=masked)
        targets = sample["target"][masked]
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), reduction="sum")
        sample_size = int(masked.sum())
        logging_output = {"loss": loss.detach().item(), "ntokens": sample["ntokens"], "sample_size": sample_size}
        return loss, sample_size, logging_output


class Trainer:
    def __init__(self, model, criterion, optimizer):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.epoch_logging_outputs = []

    def train_step(self, sample):
        self.optimizer.zero_grad()
        loss, sample_size, logging_output = self.criterion(self.model, sample)
        (loss / sample_size).backward()
        self.optimizer.step()
        self.epoch_logging_outputs.append(logging_output)

    def epoch_summary(self):
        total = sum(log["loss"] for log in self.epoch_logging_outputs)
        tokens = sum(log["sample_size"] for log in self.epoch_logging_outputs)
        return float(total) / max(tokens, 1)


def run_epoch(trainer, batches):
    for sample in batches:
        trainer.train_step(sample)
    return trainer.epoch_summary()
