# Source: https://github.com/facebookresearch/fairseq/issues/2255
# Report: the masked-LM criterion put the loss tensor itself into its logging_output dict; the logging outputs are kept for aggregation and memory kept growing as training went on.
# Shape: a criterion method returns (loss, sample_size, logging_output) with the graph-carrying loss inside the dict; the trainer keeps every logging_output on self for the epoch summary.
# Expect: TML001 line 35
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
        logging_output = {"loss": loss, "ntokens": sample["ntokens"], "sample_size": sample_size}
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
        self.epoch_logging_outputs.append(logging_output)  # expect: TML001

    def epoch_summary(self):
        total = sum(log["loss"] for log in self.epoch_logging_outputs)
        tokens = sum(log["sample_size"] for log in self.epoch_logging_outputs)
        return float(total) / max(tokens, 1)


def run_epoch(trainer, batches):
    for sample in batches:
        trainer.train_step(sample)
    return trainer.epoch_summary()
