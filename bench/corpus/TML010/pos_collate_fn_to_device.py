# Modelled on: https://github.com/bentrevett/pytorch-sentiment-analysis/issues/47
# Report: "cannot re-initialize cuda in forked subprocess" when iterating the train iterator in the train function.
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

DEVICE = torch.device("cuda")


def collate_batch(batch):
    texts = [torch.tensor(ids) for ids, _ in batch]
    labels = torch.tensor([label for _, label in batch], dtype=torch.float)
    return pad_sequence(texts, batch_first=True).to(DEVICE), labels.to(DEVICE)  # expect: TML010


def make_loader(dataset):
    return DataLoader(dataset, batch_size=64, shuffle=True, collate_fn=collate_batch, num_workers=2)
