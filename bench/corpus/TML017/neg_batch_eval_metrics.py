# Modelled on: https://github.com/huggingface/transformers/pull/28769
# Report: batch_eval_metrics=True lets compute_metrics update running averages per batch instead of storing all logits.
from transformers import Trainer, TrainingArguments


class RunningAccuracy:
    def __init__(self):
        self.correct = 0
        self.total = 0

    def __call__(self, eval_pred, compute_result=False):
        logits, labels = eval_pred
        self.correct += (logits.argmax(-1) == labels).sum().item()
        self.total += labels.numel()
        if compute_result:
            result = {"accuracy": self.correct / max(self.total, 1)}
            self.correct = self.total = 0
            return result


def build_trainer(model, train_ds, eval_ds):
    args = TrainingArguments(output_dir="vit", eval_strategy="epoch", batch_eval_metrics=True)
    return Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                   compute_metrics=RunningAccuracy())
