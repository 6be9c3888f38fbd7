# Modelled on: https://github.com/huggingface/transformers/issues/12878
# Report: "Trainer accumulates logits": 1000 examples of length 512 with a 30522 vocabulary already need more than 14 GB.
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments


class LoggingTrainer(Seq2SeqTrainer):
    def log(self, logs, *args, **kwargs):
        logs["lr"] = self.lr_scheduler.get_last_lr()[0]
        super().log(logs, *args, **kwargs)


def build(model, tokenizer, data, compute_rouge):
    args = Seq2SeqTrainingArguments(
        output_dir="ckpt",
        eval_strategy="steps",
        eval_steps=500,
        per_device_eval_batch_size=32,
    )
    return LoggingTrainer(  # expect: TML017
        model=model,
        args=args,
        tokenizer=tokenizer,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        compute_metrics=compute_rouge,
    )
