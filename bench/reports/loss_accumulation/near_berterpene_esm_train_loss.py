# Source: https://github.com/madscort/BERTerpene/blob/main/scripts/esm.py
# Report: fixed version of the repository's ESM-2 fine-tuning loop: the training total takes output.loss.item(); validation unchanged (output computed under no_grad)
# Shape: the outliving training total only gets Python floats; total_val_loss += output.loss adds a tensor with no graph (output was produced inside torch.no_grad())
# Expect: near-miss: must be silent
import time

import torch
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from torch.utils.data import DataLoader
from transformers import EsmForSequenceClassification, get_linear_schedule_with_warmup


def label_scores(logits, labels, acc, bal):
    logits = logits.detach().cpu().numpy()
    labels = labels.to("cpu").numpy()
    acc += accuracy_score(labels.argmax(axis=1), logits.argmax(axis=1))
    bal += balanced_accuracy_score(labels.argmax(axis=1), logits.argmax(axis=1))
    return acc, bal


def finetune(train_dataset, val_dataset, num_labels, epochs=3, batch_size=10, lr=5e-5, device="cuda"):
    model = EsmForSequenceClassification.from_pretrained(
        "facebook/esm2_t6_8M_UR50D", num_labels=num_labels, problem_type="multi_label_classification")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(val_dataset, batch_size=batch_size, shuffle=True)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, len(train_loader) * epochs)
    model.to(device)
    t0 = time.time()
    train_loss, val_loss = [], []

    for epoch in range(epochs):
        model.train()
        total_train_loss = 0
        total_acc, total_bal = 0, 0
        for step, batch in enumerate(train_loader):
            if step % 5 == 0:
                print(f"batch {step + 1} of {len(train_loader)} ({time.time() - t0:.0f}s)")
            optimizer.zero_grad()
            input_ids = batch["input_ids"].to(device)
            attention_mask = batch["attention_mask"].to(device)
            labels = batch["label"].to(device)

            output = model(input_ids, attention_mask=attention_mask, labels=labels)
            total_train_loss += output.loss.item()
            total_acc, total_bal = label_scores(output.logits, labels, total_acc, total_bal)

            output.loss.backward()
            optimizer.step()
            scheduler.step()
        train_loss.append(float(total_train_loss / len(train_loader)))

        model.eval()
        total_val_loss = 0
        val_acc, val_bal = 0, 0
        for batch in val_loader:
            input_ids = batch["input_ids"].to(device)
            attention_mask = batch["attention_mask"].to(device)
            labels = batch["label"].to(device)
            with torch.no_grad():
                output = model(input_ids, attention_mask=attention_mask, labels=labels)
            total_val_loss += output.loss
            val_acc, val_bal = label_scores(output.logits, labels, val_acc, val_bal)
        val_loss.append(float(total_val_loss / len(val_loader)))
        print(f"epoch {epoch + 1}: train {train_loss[-1]:.2f} val {val_loss[-1]:.2f} acc {val_acc / len(val_loader):.2f}")
    return train_loss, val_loss
