# Source: https://github.com/ServiceNow/azimuth/issues/549
# Report: in the prediction / saliency tasks some memory was added every batch and never released; wrapping the prediction tasks in torch.no_grad() helped
# Shape: same prediction task, with the batch loop wrapped in torch.no_grad() as the thread settled on, so the kept .cpu() probabilities carry no graph
# Expect: near-miss: must be silent
from dataclasses import dataclass, field
from typing import List

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer


@dataclass
class PredictionResult:
    utterances: List[str] = field(default_factory=list)
    probs: List[torch.Tensor] = field(default_factory=list)
    labels: List[int] = field(default_factory=list)


def make_loader(tokenizer, texts, batch_size=32, max_length=128):
    def collate(chunk):
        enc = tokenizer(chunk, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        enc["texts"] = chunk
        return enc

    return DataLoader(texts, batch_size=batch_size, shuffle=False, collate_fn=collate)


def run_prediction_task(model_name, texts, device="cuda", batch_size=32):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(model_name).to(device)
    model.eval()
    result = PredictionResult()
    with torch.no_grad():
        for batch in make_loader(tokenizer, texts, batch_size):
            chunk = batch.pop("texts")
            inputs = {k: v.to(device) for k, v in batch.items()}
            out = model(**inputs)
            probs = out.logits.softmax(dim=-1)
            result.probs.append(probs.cpu())
            result.labels.extend(probs.argmax(dim=-1).tolist())
            result.utterances.extend(chunk)
    return result


def summarize(result: PredictionResult, id2label):
    stacked = torch.cat(result.probs)
    confidence = stacked.max(dim=-1).values
    low = (confidence < 0.5).sum().item()
    counts = {}
    for label in result.labels:
        counts[id2label[label]] = counts.get(id2label[label], 0) + 1
    return {"n": len(result.labels), "low_confidence": low, "per_class": counts}


if __name__ == "__main__":
    texts = ["reset my password please", "what is my balance", "cancel the card"] * 500
    res = run_prediction_task("distilbert-base-uncased-finetuned-sst-2-english", texts)
    print(summarize(res, {0: "NEGATIVE", 1: "POSITIVE"}))
