# Source: https://github.com/BUTSpeechFIT/huggingface_asr/blob/c6152423d0aef4834a57470c377058898f209b3a/src/utilities/training_utils.py
# Report: joint CTC/attention ASR trainer (HF Seq2SeqTrainer subclass) records the encoder and decoder losses of every step for a logging callback; the values are appended as graph-attached tensors
# Shape: compute_loss (called once per step) appends outputs.enc_loss.mean() / outputs.dec_loss.mean() to self.state.additional_logs, which lives on the TrainerState until the next on_log; every step's loss tensors and autograd nodes pile up between log steps
# Expect: TML001 line 40
from dataclasses import field, make_dataclass
from typing import List, Tuple, Union

import torch
from transformers import BatchFeature, Seq2SeqTrainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments


class EncDecLossPrinter(TrainerCallback):
    """Adds a per-run list to the trainer state and prints its mean at every log step."""

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        state.__class__ = make_dataclass(
            "state_with_logs",
            [("additional_logs", List[List[float]], field(default_factory=list))],
            bases=(TrainerState,),
        )
        state.additional_logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if getattr(state, "additional_logs", None):
            enc_loss, dec_loss = torch.tensor(state.additional_logs).mean(axis=0)
            if state.is_local_process_zero:
                logs["enc_loss"] = float(enc_loss)
                logs["dec_loss"] = float(dec_loss)
            state.additional_logs = []


class EncDecLossTrainer(Seq2SeqTrainer):
    """Seq2SeqTrainer that also reports the CTC (encoder) and attention (decoder) losses."""

    def compute_loss(self, model, inputs: BatchFeature, return_outputs=False) -> Union[float, Tuple]:
        labels = inputs.pop("labels") if self.label_smoother is not None and "labels" in inputs else None
        outputs = model(**inputs)

        if hasattr(self.state, "additional_logs"):
            self.state.additional_logs.append([outputs.enc_loss.mean(), outputs.dec_loss.mean()])  # expect: TML001

        if self.args.past_index >= 0:
            self._past = outputs[self.args.past_index]

        if labels is not None:
            loss = self.label_smoother(outputs, labels)
        else:
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        return (loss, outputs) if return_outputs else loss


def build_trainer(model, training_args, train_set, eval_set, collator, tokenizer):
    return EncDecLossTrainer(
        model=model,
        args=training_args,
        train_dataset=train_set,
        eval_dataset=eval_set,
        data_collator=collator,
        tokenizer=tokenizer,
        callbacks=[EncDecLossPrinter()],
    )
