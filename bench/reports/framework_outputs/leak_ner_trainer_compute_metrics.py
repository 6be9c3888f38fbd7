# Source: https://github.com/Heulwen31/named-entity-recognition-covid-19-use-bert-/blob/6277a3e17d76ef824aa79f10ea15921aefb4d277/train_ner_model.py
# Report: audit of a COVID-19 NER fine-tuning script: HF Trainer is built with a seqeval compute_metrics and per-epoch evaluation, but TrainingArguments has no eval_accumulation_steps, so the Trainer gathers every eval batch's token logits on the GPU before compute_metrics ever sees them
# Shape: TrainingArguments + Trainer(compute_metrics=...) exactly as the script builds them; compute_metrics argmaxes the full [N, seq_len, num_labels] logits array
# Expect: TML017 line 60
import numpy as np
from datasets import load_dataset
from evaluate import load as load_metric
from transformers import (AutoModelForTokenClassification, AutoTokenizer,
                          DataCollatorForTokenClassification, Trainer,
                          TrainingArguments)

task = "ner"
model_checkpoint = "bert-base-multilingual-cased"
batch_size = 16

raw = load_dataset("json", data_files={"train": "data/train.json", "test": "data/test.json"})
label_list = raw["train"].features[f"{task}_tags"].feature.names
tokenizer = AutoTokenizer.from_pretrained(model_checkpoint)


def tokenize_and_align_labels(examples):
    tokenized = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True)
    labels = []
    for i, tags in enumerate(examples[f"{task}_tags"]):
        word_ids = tokenized.word_ids(batch_index=i)
        labels.append([-100 if w is None else tags[w] for w in word_ids])
    tokenized["labels"] = labels
    return tokenized


train_tokenized = raw["train"].map(tokenize_and_align_labels, batched=True)
test_tokenized = raw["test"].map(tokenize_and_align_labels, batched=True)

model = AutoModelForTokenClassification.from_pretrained(model_checkpoint, num_labels=len(label_list))
args = TrainingArguments(
    f"test-{task}",
    evaluation_strategy="epoch",
    learning_rate=1e-4,
    per_device_train_batch_size=batch_size,
    per_device_eval_batch_size=batch_size,
    num_train_epochs=3,
    weight_decay=1e-5,
)
data_collator = DataCollatorForTokenClassification(tokenizer)
metric = load_metric("seqeval")


def compute_metrics(p):
    predictions, labels = p
    predictions = np.argmax(predictions, axis=2)
    true_predictions = [[label_list[p] for (p, l) in zip(pred, lab) if l != -100]
                        for pred, lab in zip(predictions, labels)]
    true_labels = [[label_list[l] for (p, l) in zip(pred, lab) if l != -100]
                   for pred, lab in zip(predictions, labels)]
    results = metric.compute(predictions=true_predictions, references=true_labels)
    return {"precision": results["overall_precision"], "recall": results["overall_recall"],
            "f1": results["overall_f1"], "accuracy": results["overall_accuracy"]}


trainer = Trainer(  # expect: TML017
    model,
    args,
    train_dataset=train_tokenized,
    eval_dataset=test_tokenized,
    data_collator=data_collator,
    tokenizer=tokenizer,
    compute_metrics=compute_metrics,
)
trainer.train()
trainer.evaluate()
trainer.save_model("un-ner.model")
