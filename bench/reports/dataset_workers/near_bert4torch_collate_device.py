# Source: https://github.com/Tongjilibo/bert4torch/issues/149
# Report: the bert4torch NER-CRF example failed as soon as DataLoader num_workers was set above 0, because its collate_fn built the padded batch tensors directly on the CUDA device inside the worker processes.
# Shape: the usual remedy: collate_fn builds CPU tensors only (pin_memory on the loader) and the training loop moves each batch to the device in the main process.
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader
from bert4torch.tokenizers import Tokenizer

device = "cuda" if torch.cuda.is_available() else "cpu"
maxlen = 256
dict_path = "chinese_L-12_H-768_A-12/vocab.txt"
tokenizer = Tokenizer(dict_path, do_lower_case=True)
categories = ["LOC", "PER", "ORG"]
categories_label2id = {"O": 0}
for c in categories:
    categories_label2id["B-" + c] = len(categories_label2id)
    categories_label2id["I-" + c] = len(categories_label2id)


def sequence_padding(seqs, value=0):
    length = max(len(s) for s in seqs)
    out = np.full((len(seqs), length), value, dtype="int64")
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out


def collate_fn(batch):
    batch_token_ids, batch_labels = [], []
    for text, *spans in batch:
        tokens = tokenizer.tokenize(text, maxlen=maxlen)
        mapping = tokenizer.rematch(text, tokens)
        start_mapping = {j[0]: i for i, j in enumerate(mapping) if j}
        end_mapping = {j[-1]: i for i, j in enumerate(mapping) if j}
        token_ids = tokenizer.tokens_to_ids(tokens)
        labels = np.zeros(len(token_ids))
        for start, end, label in spans:
            if start in start_mapping and end in end_mapping:
                s, e = start_mapping[start], end_mapping[end]
                labels[s] = categories_label2id["B-" + label]
                labels[s + 1 : e + 1] = categories_label2id["I-" + label]
        batch_token_ids.append(token_ids)
        batch_labels.append(labels)
    batch_token_ids = torch.tensor(sequence_padding(batch_token_ids), dtype=torch.long)
    batch_labels = torch.tensor(sequence_padding(batch_labels), dtype=torch.long)
    return batch_token_ids, batch_labels


def build_loader(train_data, batch_size=16):
    return DataLoader(train_data, batch_size=batch_size, shuffle=True,
                      num_workers=4, pin_memory=True, collate_fn=collate_fn)


def train_one_epoch(model, loader, optimizer):
    model.train()
    for token_ids, labels in loader:
        token_ids = token_ids.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        loss = model(token_ids, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
