# Source: https://github.com/facebookresearch/fairseq2/pull/733
# Report: fairseq2 moved loss.detach() into the metric bags because update_nll_loss() fed the raw loss into a running weighted Mean kept for the whole run
# Shape: the train unit hands the graph-attached loss to a persistent metric bag whose helper adds it into self.weighted_sum
# Expect: TML001 line 40
import torch
from torch import Tensor


class WeightedMean:
    def __init__(self, device: torch.device) -> None:
        self.weighted_sum = torch.zeros((), device=device)
        self.weights = torch.zeros((), device=device)

    def update(self, value: Tensor, weight: float) -> None:
        self.weighted_sum = self.weighted_sum + value * weight
        self.weights = self.weights + weight

    def compute(self) -> float:
        return (self.weighted_sum / self.weights).item()


class SequenceMetricBag:
    def __init__(self, device: torch.device) -> None:
        self._nll_loss = WeightedMean(device)

    def update_nll_loss(self, batch, loss: Tensor) -> None:
        num_target_elements = batch.num_target_elements()
        self._nll_loss.update(loss / num_target_elements, weight=num_target_elements)


class InstructionFinetuneUnit:
    def __init__(self, model, device: torch.device) -> None:
        self._model = model
        self._metric_bag = SequenceMetricBag(device)

    def __call__(self, batch) -> Tensor:
        input_batch, target_batch = batch.as_input_and_target()
        output = self._model(input_batch)
        loss = output.compute_loss(target_batch.seqs, loss_mask=target_batch.target_mask)
        self._metric_bag.update_nll_loss(target_batch, loss)  # expect: TML001
        return loss


def run_epoch(unit: InstructionFinetuneUnit, optimizer, data_reader) -> float:
    for batch in data_reader:
        optimizer.zero_grad()
        loss = unit(batch)
        loss.backward()
        optimizer.step()
    return unit._metric_bag._nll_loss.compute()
