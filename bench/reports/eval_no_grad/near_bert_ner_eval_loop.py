# Source: https://github.com/Kyubyong/bert_ner/blob/master/train.py
# Report: repository is correct: eval() puts the DataParallel NER model in eval mode and runs the whole dev loop inside torch.no_grad(), converting predictions with .cpu().numpy().tolist()
# Shape: the model returns (logits, y, y_hat); only Python lists of tag ids are kept across batches (Y, Y_hat), nothing saved for backward
# Expect: near-miss: must be silent
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
    with torch.no_grad():
        for i, batch in enumerate(iterator):
            words, x, is_heads, tags, y, seqlens = batch

            _, _, y_hat = model(x, y)

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
