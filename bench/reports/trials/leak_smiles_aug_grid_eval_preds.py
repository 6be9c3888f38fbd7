# Source: https://github.com/gbonavina/AugChem-impact/blob/a2ff40feb0c760728980428b3e256b799fa10c1c/lstm_regressor.py
# Report: audit of a SMILES-augmentation grid search (also driven by Optuna): each grid point trains a fresh LSTM regressor and scores it with LSTMTrainer.evaluate_model; the repo runs that loop under torch.no_grad() and keeps preds.cpu(), this is the variant it avoided, where evaluate_model has no grad-disabled context, so every test batch's LSTM graph rides along with its .cpu() copy until the whole test set is concatenated
# Shape: LSTMTrainer class (device on self) with train_model returning float histories and evaluate_model returning a metrics dict; GridSearch.train_model_on_dataset builds model/optimizer per combination, run_grid_search keeps a log of float-only result dicts across all trials
# Expect: TML003 line 49; TML001 line 51
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
from sklearn.metrics import mean_absolute_error, r2_score


class LSTMRegressor(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, num_layers, padding_idx, dropout=0.3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers=num_layers, batch_first=True, dropout=dropout)
        self.fc = nn.Linear(hidden_dim, 1)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.embedding(x), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (hn, _) = self.lstm(packed)
        return self.fc(hn[-1]).squeeze(1)


class LSTMTrainer:
    def __init__(self, model):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)

    def train_model(self, train_loader, num_epochs, criterion, optimizer):
        history = []
        for epoch in range(num_epochs):
            self.model.train()
            total = 0.0
            for batch_x, lengths, batch_y in train_loader:
                batch_x, batch_y = batch_x.to(self.device), batch_y.to(self.device)
                optimizer.zero_grad()
                loss = criterion(self.model(batch_x, lengths), batch_y)
                loss.backward()
                optimizer.step()
                total += loss.item()
            history.append(total / len(train_loader))
        return history

    def evaluate_model(self, test_loader, criterion, scaler):
        self.model.eval()
        predictions, targets, total = [], [], 0.0
        for batch_x, lengths, batch_y in test_loader:
            batch_x, batch_y = batch_x.to(self.device), batch_y.to(self.device)
            preds = self.model(batch_x, lengths)  # expect: TML003
            total += criterion(preds, batch_y).item()
            predictions.append(preds.cpu())  # expect: TML001
            targets.append(batch_y.cpu())
        y_pred = scaler.inverse_transform(torch.cat(predictions).detach().numpy().reshape(-1, 1)).ravel()
        y_true = scaler.inverse_transform(torch.cat(targets).numpy().reshape(-1, 1)).ravel()
        return {"loss": total / len(test_loader), "r2": r2_score(y_true, y_pred),
                "mae": mean_absolute_error(y_true, y_pred)}


class GridSearch:
    def __init__(self, model_config, prepare_data, augment):
        self.model_config = model_config
        self.prepare_data = prepare_data
        self.augment = augment

    def train_model_on_dataset(self, augmented_df):
        cfg = self.model_config
        data = self.prepare_data(augmented_df)
        model = LSTMRegressor(data["vocab_size"], cfg["embedding_dim"], cfg["hidden_dim"],
                              cfg["num_layers"], data["padding_idx"], cfg["dropout"])
        trainer = LSTMTrainer(model)
        criterion = nn.MSELoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
        history = trainer.train_model(data["train_loader"], cfg["epochs"], criterion, optimizer)
        scores = trainer.evaluate_model(data["test_loader"], criterion, data["scaler"])
        return {"train_loss": float(history[-1]), **{k: float(v) for k, v in scores.items()}}

    def run_grid_search(self, combinations):
        experiments_log = []
        for i, params in enumerate(combinations):
            augmented = self.augment(params)
            metrics = self.train_model_on_dataset(augmented)
            experiments_log.append({"experiment_id": i, "parameters": params, "metrics": metrics,
                                    "dataset_size": len(augmented)})
            print(f"[{i + 1}/{len(combinations)}] {params} -> r2 {metrics['r2']:.3f}")
        return experiments_log
