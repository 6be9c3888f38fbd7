# Source: https://github.com/huggingface/transformers/issues/7232
# Report: trainer.evaluate()/predict() with BERT on a 469,530-sentence evaluation set crashed with CUDA out of memory because each step's predictions were concatenated while still on the GPU and only moved to the CPU after the whole loop.
# Shape: a Trainer subclass's prediction_step hands back the full logits tensor on the GPU; the (transformers 3.x, no eval_accumulation_steps) prediction loop keeps concatenating every returned batch on the device until the evaluation set is exhausted.
# Expect: TML017 line 21
import torch
from transformers import Trainer


class SentenceClassificationTrainer(Trainer):
    """Scores a very large set of sentences with a fine-tuned BERT classifier."""

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        labels = inputs.get("labels")
        with torch.no_grad():
            outputs = model(**inputs)
            loss = outputs.loss.mean().detach() if outputs.loss is not None else None
            logits = outputs.logits
        if prediction_loss_only:
            return (loss, None, None)
        return (loss, logits, labels)  # expect: TML017


def score_sentences(model, args, eval_dataset, compute_metrics):
    trainer = SentenceClassificationTrainer(
        model=model,
        args=args,
        eval_dataset=eval_dataset,
        compute_metrics=compute_metrics,
    )
    metrics = trainer.evaluate()
    predictions = trainer.predict(eval_dataset).predictions
    return metrics, predictions.argmax(-1)
