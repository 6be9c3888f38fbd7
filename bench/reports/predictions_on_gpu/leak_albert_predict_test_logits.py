# Source: https://github.com/prathik-k/moral-classifier/blob/33df3287553d83eae1bbca215aec1e6e40531797/code/ALBERT-LARGE-V1/test.py
# Report: predict_test() computes logits under no_grad but appends every batch's logits to all_logits while they are still on the GPU and concatenates them there, so device memory grows with the size of the test set before softmax moves them to the CPU
# Shape: an ALBERT classifier wrapper; the forward sits in a with torch.no_grad() block and the append happens just after it, keeping the GPU tensor in a list that outlives the loop
# Expect: TML004 line 44
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset
from transformers import AlbertModel, AlbertTokenizer

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class AlbertClassifier(nn.Module):
    def __init__(self, n_classes=2, freeze_albert=False):
        super().__init__()
        self.albert = AlbertModel.from_pretrained("albert-large-v1")
        hidden = self.albert.config.hidden_size
        self.classifier = nn.Sequential(nn.Linear(hidden, 50), nn.ReLU(), nn.Linear(50, n_classes))
        if freeze_albert:
            for p in self.albert.parameters():
                p.requires_grad = False

    def forward(self, input_ids, attention_mask):
        outputs = self.albert(input_ids=input_ids, attention_mask=attention_mask)
        cls = outputs.last_hidden_state[:, 0, :]
        return self.classifier(cls)


def build_test_loader(texts, tokenizer, max_len=128, batch_size=32):
    enc = tokenizer(texts, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    data = TensorDataset(enc["input_ids"], enc["attention_mask"])
    return DataLoader(data, sampler=SequentialSampler(data), batch_size=batch_size)


def predict_test(model, test_dataloader):
    model.eval()
    all_logits = []
    for batch in test_dataloader:
        b_input_ids, b_attn_mask = tuple(t.to(device) for t in batch)[:2]
        with torch.no_grad():
            logits = model(b_input_ids, b_attn_mask)
        all_logits.append(logits)  # expect: TML004
    all_logits = torch.cat(all_logits, dim=0)
    probs = F.softmax(all_logits, dim=1).cpu().numpy()
    return probs


def classify(texts, checkpoint, threshold=0.5):
    tokenizer = AlbertTokenizer.from_pretrained("albert-large-v1")
    model = AlbertClassifier().to(device)
    model.load_state_dict(torch.load(checkpoint, map_location=device))
    probs = predict_test(model, build_test_loader(texts, tokenizer))
    preds = np.where(probs[:, 1] > threshold, 1, 0)
    print(f"{preds.sum()} of {len(preds)} texts flagged as moral judgements")
    return preds, probs
