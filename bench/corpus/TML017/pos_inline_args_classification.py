# Modelled on: https://github.com/huggingface/transformers/issues/18947
# Report: evaluation_loop concatenates all logits and labels of the validation set before compute_metrics, easily exceeding GPU memory; eval_accumulation_steps avoids it.
import evaluate
import numpy as np
import transformers

accuracy = evaluate.load("accuracy")


def metrics(p):
    return accuracy.compute(predictions=np.argmax(p.predictions, -1), references=p.label_ids)


def main(model, tokenized):
    trainer = transformers.Trainer(  # expect: TML017
        model,
        transformers.TrainingArguments("out", eval_strategy="epoch", per_device_eval_batch_size=64),
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        compute_metrics=metrics,
    )
    trainer.train()
    return trainer.evaluate()
