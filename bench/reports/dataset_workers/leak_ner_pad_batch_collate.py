# Source: https://github.com/SabhyaC26/ner_experiments/blob/8cd5d026cea07489c4100f6177fd23e2e94e16b7/src/util/util.py
# Report: audit of a BiLSTM-CRF NER project: the DataLoader collate_fn pad_batch pads the token and tag sequences and moves both to the CUDA device inside the collate function, so batches are built on the GPU in whatever process runs the collate (a loader worker once num_workers > 0)
# Shape: a module-level device, a pad_batch collate returning (x_pad, x_lens, y_pad), a model that returns a dict with 'loss', train/evaluate helpers that sum loss.item(); the runner builds loaders with workers from the config
# Expect: TML010 line 29; TML010 line 31
from typing import List, Tuple

import torch
import torch.nn.utils.rnn as rnn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ConllDataset(Dataset):
    def __init__(self, token_ids: List[List[int]], tag_ids: List[List[int]]):
        self.token_ids, self.tag_ids = token_ids, tag_ids

    def __len__(self):
        return len(self.token_ids)

    def __getitem__(self, idx):
        return torch.LongTensor(self.token_ids[idx]), torch.LongTensor(self.tag_ids[idx])


def pad_batch(batch: List[Tuple[torch.Tensor, torch.Tensor]]):
    xs, ys = zip(*batch)
    x_lens = torch.LongTensor([len(x) for x in xs])
    x_pad = rnn.pad_sequence(xs, padding_value=0, batch_first=True)
    x_pad = x_pad.to(device)  # expect: TML010
    y_pad = rnn.pad_sequence(ys, padding_value=0, batch_first=True)
    y_pad = y_pad.to(device)  # expect: TML010
    return x_pad, x_lens, y_pad


def train_model(model, loader, optimizer, clip=5.0):
    model.train()
    epoch_loss = 0.0
    for x_pad, x_lens, y_pad in loader:
        optimizer.zero_grad()
        result = model(x_pad, x_lens, y_pad, decode=False)
        result["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        epoch_loss += result["loss"].item()
    return epoch_loss / len(loader.dataset)


@torch.no_grad()
def evaluate_model(model, loader):
    model.eval()
    epoch_loss = 0.0
    for x_pad, x_lens, y_pad in loader:
        epoch_loss += model(x_pad, x_lens, y_pad, decode=False)["loss"].item()
    return epoch_loss / len(loader.dataset)


def run(model, train_set, val_set, config):
    train_loader = DataLoader(train_set, batch_size=config["batch_size"], shuffle=True,
                              num_workers=config["num_workers"], collate_fn=pad_batch)
    val_loader = DataLoader(val_set, batch_size=config["batch_size"], shuffle=False,
                            num_workers=config["num_workers"], collate_fn=pad_batch)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    best = float("inf")
    for epoch in range(config["epochs"]):
        train_loss = train_model(model, train_loader, optimizer, config["clip"])
        val_loss = evaluate_model(model, val_loader)
        print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f}")
        if val_loss < best:
            best = val_loss
            torch.save(model.state_dict(), "bilstm_crf.pt")
