# Source: https://github.com/abhishekpanigrahi1996/ProgressiveDistillation/blob/main/PCFG_autoregressive/components/KL_trainer_progressive.py
# Report: progressive-distillation HF Trainer subclass "freezes" its teacher with self.ref_model.requires_grad = False, a plain attribute on an nn.Module (nothing is frozen)
# Shape: the teacher's parameters keep requires_grad=True; only the inference_mode block around the teacher forward keeps .grad buffers away here, and the teacher reloaded every refresh is never frozen either
# Expect: TML016 line 21
import os
from glob import glob

import torch
from transformers import AutoModelForCausalLM, Trainer


class ProgressiveKLTrainer(Trainer):
    def __init__(self, ref_model, temperature, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ref_model = ref_model.to(self.model.device)
        self.ref_config = self.ref_model.config
        self.ignore_index = -100
        self.temperature = temperature
        self.refresh_frequency = self.args.refresh_frequency
        self.ref_created_ckpts = []
        self.ref_model.requires_grad = False  # expect: TML016
        ckpts = glob(os.path.join(self.args.ref_model_ckpt_dir, "checkpoint-*"))
        self.all_ckpts = {int(p.split("-")[-1]): p for p in ckpts}
        self.curr_alpha = 0.0
        self.eval_acc, self.eval_num = 0.0, 0

    def accuracy_eval(self, model, inputs, labels, padding_mask):
        # only reached from prediction_step, which HF runs under torch.no_grad()
        outputs = model(**inputs)
        preds = outputs.logits.detach()
        hits = (preds[..., :-1, :].argmax(-1) == labels).float() * (1.0 - padding_mask.float())
        acc = hits.sum() / (1e-10 + padding_mask.numel() - padding_mask.long().sum())
        self.eval_acc += acc.item()
        self.eval_num += 1
        return acc.item()

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs["logits"][..., :-1, :].contiguous()
        labels = labels[..., 1:].contiguous().unsqueeze(-1)
        padding_mask = labels.eq(self.ignore_index)
        labels.clamp_min_(0)
        n_active = padding_mask.numel() - padding_mask.long().sum()

        if model.training:
            with torch.inference_mode():
                ref_logits = self.ref_model(**inputs)["logits"][..., :-1, :].contiguous()
            log_probs = -torch.nn.functional.log_softmax(logits, dim=-1)
            ref_probs = torch.nn.functional.softmax(ref_logits / self.temperature, dim=-1)
            kl_loss = torch.sum(ref_probs * log_probs, dim=-1, keepdim=True)
            kl_loss = kl_loss.masked_fill(padding_mask, 0.0).sum() / n_active
            auto_loss = log_probs.gather(-1, labels).masked_fill(padding_mask, 0.0).sum() / n_active
            loss = self.curr_alpha * auto_loss + (1.0 - self.curr_alpha) * kl_loss
        else:
            acc = self.accuracy_eval(model, inputs, labels, padding_mask)
            log_probs = -torch.nn.functional.log_softmax(logits, dim=-1)
            loss = log_probs.gather(-1, labels).masked_fill(padding_mask, 0.0).sum() / n_active
            self.log({"eval_loss": loss.item(), "eval_acc": acc})
        return (loss, outputs) if return_outputs else loss

    def maybe_refresh_teacher(self):
        step = self.state.global_step
        if step % self.refresh_frequency != 0:
            return
        target = (1 + step // self.refresh_frequency) * self.refresh_frequency
        if target in self.ref_created_ckpts or not self.all_ckpts:
            return
        valid = max(k for k in self.all_ckpts if k - 1 < target)
        path = os.path.join(self.args.ref_model_ckpt_dir, f"checkpoint-{valid}")
        self.ref_model = AutoModelForCausalLM.from_pretrained(path, config=self.ref_config)
        self.ref_model.to(self.model.device)
        self.ref_created_ckpts.append(target)

    def training_step(self, model, inputs):
        self.maybe_refresh_teacher()
        self.ref_model.eval()
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps
