# Modelled on: https://github.com/bentrevett/pytorch-sentiment-analysis/issues/47
# Report: near-miss: the collate function pads on the CPU; the device transfer happens in the loop.
import torch
from torch.nn.utils.rnn import pad_sequence


def collate_batch(batch):
    texts = [torch.tensor(ids) for ids, _ in batch]
    labels = torch.tensor([label for _, label in batch], dtype=torch.float)
    return pad_sequence(texts, batch_first=True), labels


def train(model, loader, optimizer, device):
    for text, label in loader:
        text, label = text.to(device), label.to(device)
        optimizer.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(model(text).squeeze(1), label).backward()
        optimizer.step()
