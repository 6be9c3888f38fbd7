# Source: https://github.com/LasseAskholm/BachelorST/blob/a285a0a10dafdb234331d61d32e9ce8faa68845a/src/training/ner_training.py
# Report: audit of the BERT NER fine-tuning script: the HF Trainer gets a seqeval compute_metrics and evaluates every epoch, but TrainingArguments sets no eval_accumulation_steps, so every eval batch's (batch x 512 x labels) logits are concatenated on the GPU before compute_metrics sees them
# Shape: same script with the usual fix: TrainingArguments sets eval_accumulation_steps=8, so the Trainer moves gathered logits to the CPU every 8 eval steps instead of keeping the whole eval set's logits on the GPU
# Expect: near-miss: must be silent
import evaluate
import numpy as np
from loguru import logger
from transformers import (AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification,
                          Trainer, TrainingArguments)

seqeval = evaluate.load("seqeval")
MODEL_NAME = "bert-base-cased"


def load_labels(path):
    with open(path, encoding="utf-8") as fh:
        labels = [line.rstrip("\n") for line in fh if line.strip()]
    return {label: i for i, label in enumerate(labels)}, labels


def tokenize_and_align(examples, tokenizer, label2id):
    enc = tokenizer(list(examples["text"]), truncation=True, is_split_into_words=True, max_length=512)
    all_labels = []
    for i, tags in enumerate(examples["ner_tags"]):
        previous, ids = None, []
        for word_idx in enc.word_ids(batch_index=i):
            if word_idx is None or word_idx == previous:
                ids.append(-100)
            else:
                ids.append(label2id.get(tags[word_idx], 0))
            previous = word_idx
        all_labels.append(ids)
    enc["labels"] = all_labels
    return enc


def make_compute_metrics(label_list):
    def compute_metrics(p):
        logits, labels = p
        preds = np.argmax(logits, axis=2)
        true_preds = [[label_list[p] for p, l in zip(pr, lab) if l != -100] for pr, lab in zip(preds, labels)]
        true_labels = [[label_list[l] for p, l in zip(pr, lab) if l != -100] for pr, lab in zip(preds, labels)]
        res = seqeval.compute(predictions=true_preds, references=true_labels)
        return {k: res[f"overall_{k}"] for k in ("precision", "recall", "f1", "accuracy")}
    return compute_metrics


def main(train_data, test_data, labels_path, output_dir="bert-ner-out"):
    label2id, label_list = load_labels(labels_path)
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    fn_kwargs = {"tokenizer": tokenizer, "label2id": label2id}
    train_ds = train_data.map(tokenize_and_align, batched=True, fn_kwargs=fn_kwargs)
    test_ds = test_data.map(tokenize_and_align, batched=True, fn_kwargs=fn_kwargs)
    model = AutoModelForTokenClassification.from_pretrained(
        MODEL_NAME, num_labels=len(label_list),
        id2label=dict(enumerate(label_list)), label2id=label2id,
    )
    logger.info("Setting training args")
    training_args = TrainingArguments(
        output_dir=output_dir,
        evaluation_strategy="epoch",
        learning_rate=3e-5,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=16,
        num_train_epochs=10,
        weight_decay=0.01,
        logging_steps=50,
        eval_accumulation_steps=8,
    )
    collator = DataCollatorForTokenClassification(tokenizer)
    trainer = Trainer(model, training_args, train_dataset=train_ds, eval_dataset=test_ds, data_collator=collator, tokenizer=tokenizer, compute_metrics=make_compute_metrics(label_list))
    logger.info("Starting training")
    trainer.train()
    trainer.save_model(output_dir)
    return trainer.evaluate()
