# Source: https://github.com/2U1/Qwen-VL-Series-Finetune/issues/136
# Report: a user proposed calling torch.cuda.empty_cache() at the start of the Trainer's training_step to stop memory creeping up on long VL fine-tuning runs; the maintainer answered that flushing the cache every step degrades training speed
# Shape: same Trainer subclass, but training_step no longer flushes the allocator (the maintainer's concern was the per-step slowdown); the cache is released once, after trainer.train() returns and before saving
# Expect: near-miss: must be silent
import logging

import torch
from transformers import Trainer, TrainingArguments

logger = logging.getLogger(__name__)


class VisionLanguageTrainer(Trainer):
    """Trainer for image+text SFT with a separate LR for the vision tower."""

    def __init__(self, *args, vision_lr=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.vision_lr = vision_lr

    def create_optimizer(self):
        if self.optimizer is None and self.vision_lr is not None:
            vision, rest = [], []
            for name, p in self.model.named_parameters():
                if not p.requires_grad:
                    continue
                (vision if "visual" in name else rest).append(p)
            groups = [{"params": rest}, {"params": vision, "lr": self.vision_lr}]
            self.optimizer = torch.optim.AdamW(groups, lr=self.args.learning_rate,
                                               weight_decay=self.args.weight_decay)
            return self.optimizer
        return super().create_optimizer()

    def training_step(self, model, inputs, num_items_in_batch=None):
        # keep the caching allocator warm between steps
        return super().training_step(model, inputs, num_items_in_batch)

    def log(self, logs, *args, **kwargs):
        if torch.cuda.is_available():
            logs["gpu_reserved_gb"] = round(torch.cuda.memory_reserved() / 2**30, 2)
        super().log(logs, *args, **kwargs)


def build_args(out_dir):
    return TrainingArguments(
        output_dir=out_dir,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=8,
        learning_rate=1e-5,
        num_train_epochs=1,
        bf16=True,
        gradient_checkpointing=True,
        logging_steps=10,
        save_strategy="steps",
        save_steps=500,
        remove_unused_columns=False,
        report_to="none",
    )


def finetune(model, processor, train_ds, collator, out_dir="output/qwen_vl_sft"):
    trainer = VisionLanguageTrainer(
        model=model,
        args=build_args(out_dir),
        train_dataset=train_ds,
        data_collator=collator,
        vision_lr=2e-6,
    )
    result = trainer.train()
    logger.info("finished: %s", result.metrics)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()  # once, after the loop, before export
    trainer.save_model(out_dir)
    processor.save_pretrained(out_dir)
    return trainer
