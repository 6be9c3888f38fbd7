# Source: https://github.com/jernejvivod/ehr-classification-with-bert/blob/115b1eb79f382bf7f8807d8c10a227fae2663c08/ehr_classification_with_bert/bert_evaluation.py
# Report: evaluate_model() starts from empty GPU tensors and rebuilds them with torch.cat((acc, batch)) every eval batch for the softmax probabilities and the labels, so each step copies the whole growing accumulator on the device
# Shape: fixed: each batch's probabilities and labels are appended to lists as CPU tensors and torch.cat runs once after the loop, before the report helper
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as nnf
from sklearn import metrics
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _move(batch):
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}


def evaluate_model(model, eval_dataloader: DataLoader, class_names, results_path="."):
    model.eval()
    proba_chunks, label_chunks = [], []

    progress_bar = tqdm(range(len(eval_dataloader)))
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**_move(batch))

        logits = outputs.logits if hasattr(outputs, "logits") else outputs
        proba_chunks.append(nnf.softmax(logits, dim=1).cpu())
        label_chunks.append(batch["labels"].cpu())
        progress_bar.update(1)

    predicted_proba = torch.cat(proba_chunks, dim=0)
    y_true = torch.cat(label_chunks)
    return evaluate_predictions(predicted_proba, y_true, class_names, results_path)


def evaluate_predictions(predicted_proba, y_true, class_names, results_path="."):
    y_pred = torch.argmax(predicted_proba, dim=1)
    report = metrics.classification_report(y_true.tolist(), y_pred.tolist(), target_names=class_names)
    with open(f"{results_path}/bert_classification_report.txt", "w") as fh:
        fh.write(report)
    if len(class_names) == 2:
        auc = metrics.roc_auc_score(y_true.tolist(), predicted_proba[:, 1].numpy())
        print(f"ROC AUC: {auc:.4f}")
    return report


if __name__ == "__main__":
    from transformers import AutoModelForSequenceClassification

    clf = AutoModelForSequenceClassification.from_pretrained("./fine-tuned-bert").to(device)
    loader = torch.load("eval_loader.pt", map_location="cpu")
    print(evaluate_model(clf, loader, ["negative", "positive"]))
