# Source: https://github.com/hiyouga/LlamaFactory/issues/1595
# Report: evaluating during SFT ran out of memory because the Trainer's eval loop concatenated every step's full-vocabulary logits (preds_host) on the GPU before calling the custom compute_metrics
# Shape: an SFT workflow function builds Seq2SeqTrainingArguments with periodic evaluation but no eval_accumulation_steps and hands a token-accuracy compute_metrics to the trainer
# Expect: TML017 line 48
from dataclasses import dataclass

import numpy as np
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

IGNORE_INDEX = -100


@dataclass
class ComputeAccuracy:
    def __call__(self, eval_preds):
        logits, labels = eval_preds
        preds = np.argmax(logits[:, :-1], axis=-1)
        labels = labels[:, 1:]
        mask = labels != IGNORE_INDEX
        return {"accuracy": float((preds[mask] == labels[mask]).mean())}


def run_sft(model_name, train_ds, eval_ds, output_dir):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype="auto")
    collator = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX, pad_to_multiple_of=8)

    training_args = Seq2SeqTrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        gradient_accumulation_steps=8,
        evaluation_strategy="steps",
        eval_steps=200,
        save_steps=200,
        learning_rate=5e-5,
        num_train_epochs=3.0,
        bf16=True,
        predict_with_generate=False,
    )

    trainer = Seq2SeqTrainer(  # expect: TML017
        model=model,
        args=training_args,
        tokenizer=tokenizer,
        data_collator=collator,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        compute_metrics=ComputeAccuracy(),
    )
    train_result = trainer.train()
    trainer.save_model()
    trainer.log_metrics("train", train_result.metrics)
    return trainer.evaluate(metric_key_prefix="eval")
