# Source: https://github.com/Kyubyong/bert_ner/blob/master/train.py
# Report: one edit away from the repository: the with torch.no_grad() around the dev loop is dropped (predictions are argmax ids, so .cpu().numpy() still works and nothing errors)
# Shape: after model.eval() in the same function, every dev batch runs the BERT encoder with grad enabled and no backward: all activations are saved for a backward that never comes (higher peak per batch); the kept lists only hold Python ints
# Expect: TML003 line 45
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, encoder, hidden, vocab_size):
        super().__init__()
        self.encoder = encoder
        self.fc = nn.Linear(hidden, vocab_size)

    def forward(self, x, y):
        x = x.cuda()
        y = y.cuda()
        enc = self.encoder(x)
        logits = self.fc(enc)
        y_hat = logits.argmax(-1)
        return logits, y, y_hat


def train(model, iterator, optimizer, criterion):
    model.train()
    for i, batch in enumerate(iterator):
        words, x, is_heads, tags, y, seqlens = batch
        optimizer.zero_grad()
        logits, y, _ = model(x, y)
        loss = criterion(logits.view(-1, logits.shape[-1]), y.view(-1))
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            print(f"step: {i}, loss: {loss.item()}")


def eval(model, iterator, idx2tag):
    model.eval()

    Words, Is_heads, Tags, Y, Y_hat = [], [], [], [], []
    for i, batch in enumerate(iterator):
        words, x, is_heads, tags, y, seqlens = batch

        _, _, y_hat = model(x, y)  # expect: TML003

        Words.extend(words)
        Is_heads.extend(is_heads)
        Tags.extend(tags)
        Y.extend(y.numpy().tolist())
        Y_hat.extend(y_hat.cpu().numpy().tolist())

    preds = []
    for is_heads, y_hat in zip(Is_heads, Y_hat):
        y_hat = [hat for head, hat in zip(is_heads, y_hat) if head == 1]
        preds.append([idx2tag[hat] for hat in y_hat])
    gold = [t.split() for t in Tags]
    num_correct = sum(int(p == g) for ps, gs in zip(preds, gold) for p, g in zip(ps, gs))
    num_gold = sum(len(g) for g in gold)
    return num_correct / max(1, num_gold)
