# Source: https://github.com/NotJeremyCapps/CS2-DL-round-predictor/blob/05d5f7dd9c0e4c27484cd5a3ae84e3a49a436ca2/src/training.py
# Report: audit of a CS2 round-outcome LSTM trainer: earlier revisions of train_model() passed the LSTM (h, c) returned by one batch straight into the next batch's forward and only reset it on a new round, so each step's graph hangs off every earlier batch; this revision detaches (h, c) after optimizer.step()
# Shape: a ModelTrainer class whose train() method feeds self.model(main, primary, secondary, hidden) and rebinds hidden from the model's own output every batch without detaching it; metrics go to a scalar logger through log_scalars()
# Expect: TML005 line 53
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class RoundLSTM(nn.Module):
    def __init__(self, n_features, n_weapons, hidden_size=60, n_layers=2):
        super().__init__()
        self.prim_emb = nn.Embedding(n_weapons, 8)
        self.sec_emb = nn.Embedding(n_weapons, 8)
        self.lstm = nn.LSTM(n_features + 16, hidden_size, n_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, main, prim, sec, hidden=None):
        x = torch.cat([main, self.prim_emb(prim), self.sec_emb(sec)], dim=-1)
        seq, hidden = self.lstm(x, hidden)
        return self.head(seq[:, -1]), hidden


class ModelTrainer:
    def __init__(self, trainset, n_features, n_weapons, batch_size=28, epochs=1):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = RoundLSTM(n_features, n_weapons).to(self.device)
        self.loss_fn = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loader = DataLoader(trainset, batch_size=batch_size, drop_last=True)
        self.epochs = epochs
        self.batch_size = batch_size
        self.history = {}

    def log_scalars(self, tag, metrics, step):
        for name, value in metrics.items():
            self.history.setdefault(f"{tag}/{name}", []).append((step, value))

    def _to_device(self, batch):
        target, new_round, main, prim, sec = batch
        return (target.to(self.device).float(), new_round,
                main.to(self.device), prim.long().to(self.device), sec.long().to(self.device))

    def train(self, epoch):
        self.model.train()
        hidden = None
        correct, seen = 0, 0
        for batch_idx, batch in enumerate(self.loader):
            target, new_round, main, prim, sec = self._to_device(batch)
            if main.size(1) == 0:
                continue
            # the round context flows from batch to batch
            out, hidden = self.model(main, prim, sec, hidden)  # expect: TML005
            out = out.squeeze(-1)
            loss = self.loss_fn(out, target)

            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

            preds = (torch.sigmoid(out) > 0.5).float()
            correct += int((preds == target).sum().item())
            seen += self.batch_size
            if bool(new_round.any()):
                hidden = None
            self.log_scalars("train", {"loss": loss.item(), "acc": correct / seen}, batch_idx)
        print(f"epoch {epoch}: {correct}/{seen}")

    def train_model(self):
        for epoch in range(self.epochs):
            self.train(epoch)
        return self.history
