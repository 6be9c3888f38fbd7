# Source: https://github.com/jespinosal/nlp_tools/blob/2c7bf71ed97f49e5c74271d9adcf8c53430772f5/torch_utils/eval.py
# Report: eval() and validate_epoch() call model.eval() and run the transformer forward with no torch.no_grad(), so every validation batch records activations for a backward that never runs (loss read with .item(), scores with .cpu().detach())
# Shape: a multi-label transformer head; collect_predictions extends lists with sigmoid scores moved to CPU and validate_epoch sums loss.item() * batch_size, but both forwards run after model.eval() with grad still on
# Expect: TML003 line 38; TML003 line 50
import gc

import torch
import torch.nn as nn
from tqdm import tqdm
from transformers import AutoModel


class ToxicityHead(nn.Module):
    def __init__(self, backbone_name, n_labels):
        super().__init__()
        self.backbone = AutoModel.from_pretrained(backbone_name)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(self.backbone.config.hidden_size, n_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.classifier(self.dropout(hidden[:, 0]))


def _unpack(batch, device):
    input_ids = batch["input_ids"].to(device, dtype=torch.long)
    attention_mask = batch["attention_mask"].to(device, dtype=torch.long)
    labels = batch["labels"].to(device, dtype=torch.float)
    return input_ids, attention_mask, labels


def collect_predictions(model, data_loader, device):
    model.eval()
    scores, targets = [], []
    for batch in tqdm(data_loader, total=len(data_loader)):
        gc.collect()
        input_ids, attention_mask, labels = _unpack(batch, device)
        logits = model(input_ids=input_ids, attention_mask=attention_mask)  # expect: TML003
        probs = torch.sigmoid(logits)
        targets.extend(labels.cpu().detach().numpy().tolist())
        scores.extend(probs.cpu().detach().numpy().tolist())
    return scores, targets


def validate_epoch(model, data_loader, loss_fn, device):
    running_loss, seen = 0.0, 0
    model.eval()
    for step, batch in enumerate(tqdm(data_loader, total=len(data_loader))):
        input_ids, attention_mask, labels = _unpack(batch, device)
        logits = model(input_ids=input_ids, attention_mask=attention_mask)  # expect: TML003
        loss = loss_fn(logits, labels)
        batch_size = input_ids.size(0)
        running_loss += loss.item() * batch_size
        seen += batch_size
    gc.collect()
    return running_loss / seen


def fit(model, optimizer, scheduler, train_loader, val_loader, loss_fn, device, epochs):
    history = []
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            input_ids, attention_mask, labels = _unpack(batch, device)
            loss = loss_fn(model(input_ids=input_ids, attention_mask=attention_mask), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()
        val_loss = validate_epoch(model, val_loader, loss_fn, device)
        history.append({"epoch": epoch, "val_loss": val_loss})
        print(history[-1])
    return history
