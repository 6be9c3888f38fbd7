# Source: https://github.com/rudradcruze/learningPytorch/blob/07864be81c21e6920bb491e79dafaeb21f718bab/imageCaption/dataset.py
# Report: audit of a Flickr8k image-captioning project: the CapsCollate callable pads captions and stacks images on the CPU and train.py moves each batch to Config.DEVICE, with worker processes from Config.NUM_WORKERS (correct as written)
# Shape: as in the repository: __getitem__ builds CPU tensors (torch.tensor of ids), the collate class cats and pads on the CPU inside the workers, and the training loop does the .to(device) on the main process
# Expect: near-miss: must be silent
import os
from collections import Counter

import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class Vocabulary:
    def __init__(self, freq_threshold=5):
        self.itos = {0: "<PAD>", 1: "<SOS>", 2: "<EOS>", 3: "<UNK>"}
        self.stoi = {v: k for k, v in self.itos.items()}
        self.freq_threshold = freq_threshold

    def __len__(self):
        return len(self.itos)

    def build_vocab(self, sentences):
        counts = Counter(w for s in sentences for w in s.lower().split())
        for word, n in counts.items():
            if n >= self.freq_threshold:
                self.stoi[word] = len(self.itos)
                self.itos[len(self.itos)] = word

    def numericalize(self, text):
        return [self.stoi.get(w, self.stoi["<UNK>"]) for w in text.lower().split()]


class FlickrDataset(Dataset):
    def __init__(self, root_dir, caption_file, transform):
        self.root_dir, self.transform = root_dir, transform
        self.df = pd.read_csv(caption_file)
        self.vocab = Vocabulary()
        self.vocab.build_vocab(self.df["caption"].tolist())

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        img = Image.open(os.path.join(self.root_dir, self.df["image"][idx])).convert("RGB")
        ids = [1] + self.vocab.numericalize(self.df["caption"][idx]) + [2]
        return self.transform(img), torch.tensor(ids)


class CapsCollate:
    def __init__(self, pad_idx, batch_first=True):
        self.pad_idx, self.batch_first = pad_idx, batch_first

    def __call__(self, batch):
        imgs = torch.cat([item[0].unsqueeze(0) for item in batch], dim=0)
        targets = pad_sequence([item[1] for item in batch], batch_first=self.batch_first, padding_value=self.pad_idx)
        return imgs, targets


def get_data_loader(dataset, batch_size, shuffle=True, num_workers=4):
    collate = CapsCollate(dataset.vocab.stoi["<PAD>"])
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers, collate_fn=collate)


def train_model(model, dataset, epochs=10, batch_size=64, lr=3e-4, device="cuda"):
    loader = get_data_loader(dataset, batch_size, num_workers=4)
    vocab_size = len(dataset.vocab)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=dataset.vocab.stoi["<PAD>"])
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.1)
    for epoch in range(epochs):
        epoch_loss, correct, total = 0.0, 0, 0
        for step, (images, captions) in enumerate(loader):
            images, captions = images.to(device), captions.to(device)
            optimizer.zero_grad()
            outputs = model(images, captions)
            loss = criterion(outputs.reshape(-1, vocab_size), captions.reshape(-1))
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            correct += (outputs.argmax(dim=2) == captions).sum().item()
            total += captions.ne(dataset.vocab.stoi["<PAD>"]).sum().item()
        scheduler.step()
        print(f"epoch {epoch + 1}: loss {epoch_loss / len(loader):.4f} acc {correct / max(total, 1):.4f}")
        torch.save(model.state_dict(), "caption_model.pth")
