# Source: https://github.com/axolotl-ai-cloud/axolotl/pull/1858
# Report: axolotl DPO trainer subclass from the PR thread; the variant here empties the CUDA cache once, before training starts, instead of after every training_step
# Shape: the cache is released in a train() override that runs once per run, not in the per-step training_step hook, so no step pays a device sync or a fresh cudaMalloc
# Expect: near-miss: must be silent
import gc
from typing import Any, Dict, Union

import torch
from torch import nn
from trl import DPOTrainer


class SchedulerMixin:
    """Builds the LR scheduler from the axolotl config instead of the HF defaults."""

    def create_scheduler(self, num_training_steps, optimizer=None):
        optimizer = optimizer or self.optimizer
        if getattr(self.args, "cosine_min_lr_ratio", None) is not None:
            min_ratio = self.args.cosine_min_lr_ratio

            def lr_lambda(step):
                progress = min(step / max(1, num_training_steps), 1.0)
                return min_ratio + (1 - min_ratio) * 0.5 * (1 + torch.cos(torch.tensor(progress * 3.14159)).item())

            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
            return self.lr_scheduler
        return super().create_scheduler(num_training_steps, optimizer)


class AxolotlDPOTrainer(SchedulerMixin, DPOTrainer):
    tag_names = ["axolotl", "dpo"]

    def tokenize_row(self, feature, model=None):
        res = super().tokenize_row(feature, model=model)
        if self.tokenizer.bos_token_id is None and res["prompt_input_ids"][0] is None:
            for key in res.keys():
                res[key] = res[key][1:]
        return res

    def train(self, *args, **kwargs):
        # release what dataset preparation and the reference model load left cached, once
        gc.collect()
        torch.cuda.empty_cache()
        return super().train(*args, **kwargs)


def build_trainer(cfg, model, ref_model, tokenizer, training_args, train_dataset, eval_dataset):
    return AxolotlDPOTrainer(
        model=model,
        ref_model=ref_model,
        args=training_args,
        beta=cfg.rl_beta,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        tokenizer=tokenizer,
        max_length=cfg.sequence_len,
        max_prompt_length=cfg.sequence_len // 2,
    )
