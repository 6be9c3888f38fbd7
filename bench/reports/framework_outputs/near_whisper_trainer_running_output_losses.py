# Source: https://github.com/mtkresearch/clairaudience/blob/14035e26c54ce68d3c05059f14e00249cf02a28d/clairaudience/trainer.py
# Report: a Seq2SeqTrainer subclass logs its own loss terms by adding outputs.loss / outputs.lm_loss / outputs.kl_loss (graph-attached) into self attributes on every compute_loss call, reset only every logging_steps * grad_accum mini-steps
# Shape: fixed the way Trainer keeps its own tr_loss: the helper adds outputs.loss.detach() (and the other terms detached), so the running sums are plain device scalars with no history
# Expect: near-miss: must be silent
from dataclasses import dataclass, field
from typing import Dict, Optional

import torch
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments


@dataclass
class PromptedASRTrainingArguments(Seq2SeqTrainingArguments):
    num_beams: Optional[int] = field(default=3, metadata={"help": "beam size used at evaluation"})
    kl_weight: float = field(default=0.1, metadata={"help": "weight of the KL term"})


class PromptedASRTrainer(Seq2SeqTrainer):
    def __init__(self, *args, processor=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.processor = processor
        self._micro_steps = 0
        self._reset_running_losses()

    def _reset_running_losses(self):
        self._running_total = 0.0
        self._running_lm = 0.0
        self._running_kl = 0.0

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        self._micro_steps += 1
        outputs = model(
            input_features=inputs["input_features"],
            decoder_input_ids=inputs["decoder_input_ids"],
            labels=inputs["labels"],
        )
        loss = outputs.loss
        self._track_loss_terms(outputs)
        return (loss, outputs) if return_outputs else loss

    def _should_log(self):
        at_log_step = (self.state.global_step + 1) % self.args.logging_steps == 0
        at_accum_boundary = self._micro_steps % self.args.gradient_accumulation_steps == 0
        return at_log_step and at_accum_boundary

    def _track_loss_terms(self, outputs):
        self._running_total += outputs.loss.detach()
        self._running_lm += outputs.lm_loss.detach()
        if outputs.kl_loss is not None:
            self._running_kl += outputs.kl_loss.detach()

        if not self._should_log():
            return
        n = self.args.logging_steps * self.args.gradient_accumulation_steps
        logs: Dict[str, float] = {
            "total_loss": round(self._nested_gather(self._running_total).mean().item() / n, 4),
            "lm_loss": round(self._nested_gather(self._running_lm).mean().item() / n, 4),
            "step": self.state.global_step + 1,
        }
        if torch.is_tensor(self._running_kl):
            logs["kl_loss"] = round(self._nested_gather(self._running_kl).mean().item() / n, 4)
        self.log(logs)
        self._reset_running_losses()
