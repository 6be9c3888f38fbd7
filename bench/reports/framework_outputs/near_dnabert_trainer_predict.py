# Source: https://github.com/MAGICS-LAB/DNABERT_2/issues/134
# Report: trainer.predict() on the DNABERT-2 test set hit CUDA OOM in evaluation_loop's nested_concat: every batch's (tuple) logits were concatenated on the GPU
# Shape: fixed: eval_accumulation_steps offloads gathered predictions to the CPU, and preprocess_logits_for_metrics keeps only the argmax
# Expect: near-miss: must be silent
import numpy as np
import sklearn.metrics
import torch
import transformers


def preprocess_logits_for_metrics(logits, _labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return torch.argmax(logits, dim=-1)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    return {
        "accuracy": sklearn.metrics.accuracy_score(labels, predictions),
        "f1": sklearn.metrics.f1_score(labels, predictions, average="macro", zero_division=0),
        "matthews_correlation": sklearn.metrics.matthews_corrcoef(labels, predictions),
    }


def run(model, tokenizer, train_dataset, val_dataset, test_dataset, data_collator, output_dir: str):
    training_args = transformers.TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        eval_accumulation_steps=16,
        num_train_epochs=3,
        learning_rate=3e-5,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        fp16=True,
    )
    trainer = transformers.Trainer(
        model=model,
        tokenizer=tokenizer,
        args=training_args,
        preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        compute_metrics=compute_metrics,
        train_dataset=train_dataset,
        eval_dataset=val_dataset,
        data_collator=data_collator,
    )
    trainer.train()

    predictions = trainer.predict(test_dataset)
    y_test = test_dataset["labels"]
    y_pred = np.asarray(predictions.predictions)
    return sklearn.metrics.classification_report(y_test, y_pred)
