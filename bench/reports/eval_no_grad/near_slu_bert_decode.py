# Source: https://github.com/Simonwzm/cs3602_nlp_project/blob/main/scripts/slu_bert.py
# Report: BERT slot-tagging (SLU/NER-style BIO) script: dev decode() puts model.eval() and the whole batch loop under torch.no_grad(); the model's decode() returns loss.cpu().item()
# Shape: dev predictions are Python lists of strings and the loss is a float summed into total_loss; nothing from the dev loop carries a graph
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
from transformers import BertModel


class SLUTaggingBERT(nn.Module):
    def __init__(self, num_tags, hidden_size=768, pad_id=0):
        super().__init__()
        self.transformer = BertModel.from_pretrained("hfl/chinese-bert-wwm-ext")
        self.output_layer = nn.Linear(hidden_size, num_tags)
        self.loss_fct = nn.CrossEntropyLoss(ignore_index=pad_id)

    def forward(self, batch):
        hidden = self.transformer(batch.input_ids, attention_mask=batch.tag_mask)["last_hidden_state"]
        logits = self.output_layer(hidden)
        loss = self.loss_fct(logits.view(-1, logits.shape[-1]), batch.tag_ids.view(-1))
        return torch.softmax(logits, dim=-1), loss

    def decode(self, label_vocab, batch):
        prob, loss = self.forward(batch)
        predictions = []
        for i in range(len(batch)):
            pred = torch.argmax(prob[i], dim=-1).cpu().tolist()[: len(batch.utt[i])]
            tags = [label_vocab.convert_idx_to_tag(t) for t in pred]
            predictions.append([t for t in tags if t != "O"])
        return predictions, batch.labels, loss.cpu().item()


def decode(model, dataset, label_vocab, batch_size, make_batch, evaluator):
    model.eval()
    predictions, labels = [], []
    total_loss, count = 0, 0
    with torch.no_grad():
        for i in range(0, len(dataset), batch_size):
            current_batch = make_batch(dataset[i: i + batch_size])
            pred, label, loss = model.decode(label_vocab, current_batch)
            predictions.extend(pred)
            labels.extend(label)
            total_loss += loss
            count += 1
        metrics = evaluator.acc(predictions, labels)
    return metrics, total_loss / count


def train(model, train_dataset, dev_dataset, label_vocab, make_batch, evaluator, epochs=10, batch_size=32, lr=5e-5):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    best_acc = 0.0
    for epoch in range(epochs):
        start = time.time()
        model.train()
        epoch_loss, count = 0.0, 0
        for j in range(0, len(train_dataset), batch_size):
            current_batch = make_batch(train_dataset[j: j + batch_size])
            _, loss = model(current_batch)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            count += 1
        metrics, dev_loss = decode(model, dev_dataset, label_vocab, batch_size, make_batch, evaluator)
        print(f"epoch {epoch} {time.time() - start:.1f}s train {epoch_loss / count:.4f} dev {dev_loss:.4f} acc {metrics['acc']:.2f}")
        if metrics["acc"] > best_acc:
            best_acc = metrics["acc"]
            torch.save({"epoch": epoch, "model": model.state_dict()}, "best.bin")
    return best_acc
