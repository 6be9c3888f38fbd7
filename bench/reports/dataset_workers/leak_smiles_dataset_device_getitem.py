# Source: https://github.com/PaccMann/paccmann_datasets/issues/105
# Report: pytoda datasets took a device argument and called tensor.to(device) inside __getitem__; with num_workers>0 the loaders crashed re-initialising CUDA in forked workers and data loading was slow
# Shape: a SMILES dataset stores the target device at construction and builds each item's token tensor directly on it (device= factory) and moves the label with .to(device) inside __getitem__
# Expect: TML010 line 35; TML010 line 37
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SMILESTokenizer:
    def __init__(self, vocab, max_len=128):
        self.vocab = vocab
        self.max_len = max_len

    def encode(self, smiles):
        ids = [self.vocab.get(ch, self.vocab["<unk>"]) for ch in smiles][: self.max_len]
        return ids + [self.vocab["<pad>"]] * (self.max_len - len(ids))


class AnnotatedSMILESDataset(Dataset):
    def __init__(self, csv_path, tokenizer, label_columns, device=DEVICE):
        self.frame = pd.read_csv(csv_path)
        self.tokenizer = tokenizer
        self.label_columns = label_columns
        self.device = device

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, index):
        row = self.frame.iloc[index]
        token_ids = self.tokenizer.encode(row["SMILES"])
        smiles_tensor = torch.tensor(token_ids, dtype=torch.long, device=self.device)  # expect: TML010
        labels = torch.tensor(row[self.label_columns].values.astype("float32"))
        return smiles_tensor, labels.to(self.device)  # expect: TML010


def build_loader(csv_path, vocab, label_columns, batch_size=64):
    dataset = AnnotatedSMILESDataset(csv_path, SMILESTokenizer(vocab), label_columns)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4, drop_last=True)


def train_epoch(model, loader, optimizer, criterion):
    model.train()
    for smiles, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(smiles), labels)
        loss.backward()
        optimizer.step()
