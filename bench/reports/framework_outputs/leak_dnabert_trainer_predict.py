# Source: https://github.com/MAGICS-LAB/DNABERT_2/issues/134
# Report: trainer.predict() on the DNABERT-2 test set hit CUDA OOM in evaluation_loop's nested_concat: every batch's (tuple) logits were concatenated on the GPU
# Shape: notebook-style fine-tune: explicit TrainingArguments without eval_accumulation_steps, Trainer with compute_metrics, then predict() over the whole test set
# Expect: TML017 line 34
import numpy as np
import sklearn.metrics
import transformers


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    if isinstance(logits, tuple):
        logits = logits[0]
    predictions = np.argmax(logits, axis=-1)
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
        num_train_epochs=3,
        learning_rate=3e-5,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        fp16=True,
    )
    trainer = transformers.Trainer(  # expect: TML017
        model=model,
        tokenizer=tokenizer,
        args=training_args,
        compute_metrics=compute_metrics,
        train_dataset=train_dataset,
        eval_dataset=val_dataset,
        data_collator=data_collator,
    )
    trainer.train()

    predictions = trainer.predict(test_dataset)
    y_test = test_dataset["labels"]
    y_pred = predictions.predictions[0].argmax(-1)
    return sklearn.metrics.classification_report(y_test, y_pred)
