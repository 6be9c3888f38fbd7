# Source: https://github.com/Kausthub8/Emotion-Analysis-Using-BERT-With-Pytorch/blob/924632b214f581150a2d597ac00cd5609668fc35/train.py
# Report: BertForSequenceClassification emotion-analysis evaluate(dataloader_val): the repo moves each batch's logits to NumPy and concatenates once after the loop (its no_grad block is mis-indented below the for loop; this rewrite keeps it inside)
# Shape: the logits and labels are instead grown as CUDA tensors with torch.cat inside the validation loop, re-copying the whole accumulator every batch
# Expect: TML008 line 34; TML008 line 35
import numpy as np
import torch
from sklearn.metrics import f1_score

model = None
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def f1_score_func(preds, labels):
    preds_flat = np.argmax(preds, axis=1).flatten()
    return f1_score(labels.flatten(), preds_flat, average="weighted")


def evaluate(dataloader_val):
    model.eval()
    loss_val_total = 0
    predictions = torch.empty(0, device=device)
    true_vals = torch.empty(0, dtype=torch.long, device=device)
    for batch in dataloader_val:
        batch = tuple(b.to(device) for b in batch)
        inputs = {
            "input_ids": batch[0],
            "attention_mask": batch[1],
            "labels": batch[2],
        }
        with torch.no_grad():
            outputs = model(**inputs)
        loss, logits = outputs[0], outputs[1]
        loss_val_total += loss.item()
        predictions = torch.cat([predictions, logits], dim=0)  # expect: TML008
        true_vals = torch.cat([true_vals, inputs["labels"]], dim=0)  # expect: TML008
    loss_val_avg = loss_val_total / len(dataloader_val)
    return loss_val_avg, predictions.cpu().numpy(), true_vals.cpu().numpy()


def run_validation(dataloader_validation, epoch, log):
    val_loss, predictions, true_vals = evaluate(dataloader_validation)
    val_f1 = f1_score_func(predictions, true_vals)
    log.write(f"epoch {epoch}: val loss {val_loss:.4f} F1 (weighted) {val_f1:.4f}\n")
    return val_f1
