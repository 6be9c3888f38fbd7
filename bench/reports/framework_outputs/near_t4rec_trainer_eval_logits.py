# Source: https://github.com/NVIDIA-Merlin/Transformers4Rec/issues/693
# Report: trainer.evaluate() of a session-based recommender OOMs on CUDA: with eval_accumulation_steps=None the evaluation loop keeps concatenating every batch's (batch x item-catalog) prediction scores into preds_host on the GPU
# Shape: same incremental loop, but TrainingArguments sets eval_accumulation_steps so the accumulated predictions are moved off the GPU every few eval steps
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from transformers import Trainer, TrainingArguments


class NextItemModel(nn.Module):
    def __init__(self, n_items: int, d_model: int = 256):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, d_model, padding_idx=0)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, 4, batch_first=True), 2)
        self.n_items = n_items

    def forward(self, item_ids, labels=None):
        h = self.encoder(self.item_emb(item_ids))[:, -1]
        logits = h @ self.item_emb.weight.T
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out


def recall_ndcg_at_k(eval_pred, k=20):
    logits, labels = eval_pred.predictions, eval_pred.label_ids
    topk = np.argpartition(-logits, k, axis=1)[:, :k]
    hits = (topk == labels[:, None]).any(axis=1)
    return {"recall@20": float(hits.mean())}


def build_args(output_dir: str, epochs: int = 3):
    return TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=512,
        per_device_eval_batch_size=1024,
        eval_accumulation_steps=8,
        learning_rate=5e-4,
        num_train_epochs=epochs,
        evaluation_strategy="epoch",
        dataloader_drop_last=False,
        fp16=torch.cuda.is_available(),
        report_to=[],
    )


def run_rounds(train_sets, eval_set, n_items, output_dir="./t4rec_runs"):
    """Incremental training: fit on each day, then evaluate on the held-out sessions."""
    model = NextItemModel(n_items)
    args = build_args(output_dir)
    history = []
    for day, train_ds in enumerate(train_sets):
        trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_set, compute_metrics=recall_ndcg_at_k)
        trainer.train()
        metrics = trainer.evaluate()
        history.append({"day": day, **metrics})
    return history
