# Source: https://github.com/naba89/custom_hf_trainer/blob/4a38a60bd1b45b43e3f76861fef240b36059b7f7/custom_hf_trainer/custom_trainer.py
# Report: HF Trainer subclass that sums named auxiliary losses from the model output into device tensors kept on self.control between log steps; the repository detaches each term before adding it.
# Shape: compute_loss (called once per step) adds outputs[k].detach() into self.control.extra_losses[k]; the running sums hold no graph, and the logging hook reads them with .item().
# Expect: near-miss: must be silent
from typing import Dict, List

import torch
from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments


class ExtraLossState(TrainerCallback):
    def __init__(self, names: List[str]):
        self.names = names

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        control.extra_losses = {k: torch.tensor(0.0).to(args.device) for k in self.names}
        return control


class AuxLossTrainer(Trainer):
    def __init__(self, extra_losses: List[str] = None, **kwargs):
        super().__init__(**kwargs)
        if extra_losses:
            self.add_callback(ExtraLossState(extra_losses))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        loss = outputs["loss"]
        if hasattr(self.control, "extra_losses") and model.training:
            for k in self.control.extra_losses:
                if k not in outputs or outputs[k] is None:
                    continue
                v = outputs[k]
                if self.args.n_gpu > 1:
                    v = v.mean()
                self.control.extra_losses[k] += v.detach() / self.args.gradient_accumulation_steps
        return (loss, outputs) if return_outputs else loss

    def _maybe_log_save_evaluate(self, tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval, start_time=None):
        if self.control.should_log:
            logs: Dict[str, float] = {}
            steps = self.state.global_step - self._globalstep_last_logged
            tr_loss_scalar = self._nested_gather(tr_loss).mean().item()
            tr_loss -= tr_loss
            logs["loss"] = round(tr_loss_scalar / steps, 4)
            for k, v in getattr(self.control, "extra_losses", {}).items():
                logs[k] = round(self._nested_gather(v).mean().item() / steps, 4)
                self.control.extra_losses[k] -= self.control.extra_losses[k]
            logs["learning_rate"] = self._get_learning_rate()
            self._total_loss_scalar += tr_loss_scalar
            self._globalstep_last_logged = self.state.global_step
            self.store_flos()
            self.log(logs)
        if self.control.should_evaluate:
            self.evaluate(ignore_keys=ignore_keys_for_eval)
        if self.control.should_save:
            self._save_checkpoint(model, trial)
            self.control = self.callback_handler.on_save(self.args, self.state, self.control)
