# Source: https://github.com/mohammadha98/adaptive-intent-detection-using-knowledge-distillation/blob/13b1d175d73e1a0ad74b164d1b0c0bd1796641bc/src/student_model.py
# Report: one edit from the DistilBERT intent-detection student: the centroid pass after fine-tuning is written without torch.no_grad(), keeping only model.eval() and the .cpu() copies
# Shape: the forward after self.eval() records a full DistilBERT graph per batch, and embeddings[i].cpu() is a graph-attached copy: each one appended to class_embeddings (a dict of lists bound before the loop) pins that batch's GPU activations until the centroids are built
# Expect: TML003 line 67; TML001 line 69
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import DistilBertModel, DistilBertTokenizer


class SimpleDataset(Dataset):
    def __init__(self, encodings, labels):
        self.encodings = encodings
        self.labels = labels

    def __getitem__(self, idx):
        item = {k: torch.tensor(v[idx]) for k, v in self.encodings.items()}
        item["labels"] = torch.tensor(self.labels[idx])
        return item

    def __len__(self):
        return len(self.labels)


class StudentClassifier(nn.Module):
    def __init__(self, name="distilbert-base-uncased", device="cuda"):
        super().__init__()
        self.bert = DistilBertModel.from_pretrained(name)
        self.tokenizer = DistilBertTokenizer.from_pretrained(name)
        self.classifier = nn.Linear(self.bert.config.hidden_size, 2)
        self.device = torch.device(device)
        self.to(self.device)
        self.label2id, self.centroids = {}, {}

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        cls = hidden[:, 0, :]
        return self.classifier(cls), cls

    def train_on_data(self, data, epochs=5):
        labels_sorted = sorted({d["label"] for d in data})
        self.label2id = {lab: i for i, lab in enumerate(labels_sorted)}
        num_labels = len(labels_sorted)
        self.classifier = nn.Linear(self.bert.config.hidden_size, num_labels).to(self.device)

        enc = self.tokenizer([d["text"] for d in data], truncation=True, padding=True, max_length=64)
        dataset = SimpleDataset(enc, [self.label2id[d["label"]] for d in data])
        loader = DataLoader(dataset, batch_size=8, shuffle=True)
        optimizer = torch.optim.AdamW(self.parameters(), lr=5e-5)
        loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

        self.train()
        for _ in range(epochs):
            for batch in loader:
                optimizer.zero_grad()
                logits, _ = self(batch["input_ids"].to(self.device), batch["attention_mask"].to(self.device))
                loss = loss_fn(logits, batch["labels"].to(self.device))
                loss.backward()
                optimizer.step()

        self.eval()
        class_embeddings = {i: [] for i in range(num_labels)}
        for batch in DataLoader(dataset, batch_size=16):
            input_ids = batch["input_ids"].to(self.device)
            attention_mask = batch["attention_mask"].to(self.device)
            _, embeddings = self(input_ids, attention_mask)  # expect: TML003
            for i, label_idx in enumerate(batch["labels"]):
                class_embeddings[label_idx.item()].append(embeddings[i].cpu())  # expect: TML001

        self.centroids = {}
        for label_idx, emb_list in class_embeddings.items():
            if emb_list:
                mean_emb = torch.stack(emb_list).mean(dim=0)
                self.centroids[label_idx] = F.normalize(mean_emb, p=2, dim=0).to(self.device)
