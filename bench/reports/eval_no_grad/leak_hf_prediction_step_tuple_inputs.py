# Source: https://github.com/zjunlp/KnowUnDo/blob/da9cb3b98c37352cfc9ca55ec6c4d1f4988a7534/pretrain/trainer.py
# Report: HF Trainer subclass for knowledge-unlearning pretraining whose collator yields (input_ids, labels, attention_mask) tuples, so both compute_loss and prediction_step are overridden; here the override runs the eval forward without the torch.no_grad() the repository has.
# Shape: prediction_step (called by Trainer.evaluation_loop once per eval batch) runs the model with grad enabled; the returned logits keep each batch's whole graph, and evaluation_loop concatenates every batch's logits, so the eval pass's activations pile up on the GPU.
# Expect: TML003 line 35
import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


class TupleCollator:
    def __init__(self, tokenizer, max_len=512):
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __call__(self, examples):
        enc = self.tokenizer([e["text"] for e in examples], padding=True, truncation=True,
                             max_length=self.max_len, return_tensors="pt")
        labels = enc["input_ids"].clone()
        labels[enc["attention_mask"] == 0] = -100
        return enc["input_ids"], labels, enc["attention_mask"]


class UnlearnTrainer(Trainer):
    def _prepare_inputs(self, inputs):
        return tuple(t.to(self.args.device) for t in inputs)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        input_ids, labels, attention_mask = inputs
        outputs = model(input_ids, labels=labels, attention_mask=attention_mask)
        loss = outputs.loss
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs, prediction_loss_only: bool, ignore_keys=None):
        input_ids, labels, attention_mask = self._prepare_inputs(inputs)
        outputs = model(input_ids, labels=labels, attention_mask=attention_mask)  # expect: TML003
        logits = outputs.logits
        loss = outputs.loss
        if prediction_loss_only:
            return (loss, None, None)
        return (loss, logits, labels)


def run(model_name: str, train_set: Dataset, eval_set: Dataset, out_dir: str):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_name)
    args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, per_device_eval_batch_size=4,
                             num_train_epochs=1, eval_strategy="epoch", remove_unused_columns=False)
    trainer = UnlearnTrainer(model=model, args=args, train_dataset=train_set, eval_dataset=eval_set,
                             data_collator=TupleCollator(tokenizer))
    trainer.train()
    return trainer.evaluate()
