# Source: https://github.com/kathrinse/TabSurvey/blob/1408824dbacbffec5aff0fce14208c7ea538eed7/models/basemodel_torch.py
# Report: audit: BaseModelTorch.fit() has no torch.no_grad() in its early-stopping validation pass and sums val_loss += loss_func(out, y) as a tensor; fixed here by running that pass under torch.no_grad() with model.eval()
# Shape: same method; the validation loop is wrapped in torch.no_grad(), so the tensor sum val_loss is a no-grad device scalar (summed in place, no graph), while the same method still calls backward() in its training loop
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class TorchTabularModel:
    def __init__(self, model, params, args):
        self.model = model
        self.params = params
        self.args = args
        use_cuda = args.use_gpu and torch.cuda.is_available()
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.model.to(self.device)

    def fit(self, X, y, X_val, y_val):
        optimizer = optim.AdamW(self.model.parameters(), lr=self.params["learning_rate"])
        X, X_val = torch.tensor(X).float(), torch.tensor(X_val).float()
        y, y_val = torch.tensor(y), torch.tensor(y_val)
        if self.args.objective == "regression":
            loss_func = nn.MSELoss()
            y, y_val = y.float(), y_val.float()
        elif self.args.objective == "classification":
            loss_func = nn.CrossEntropyLoss()
        else:
            loss_func = nn.BCEWithLogitsLoss()
            y, y_val = y.float(), y_val.float()
        train_loader = DataLoader(TensorDataset(X, y), batch_size=self.args.batch_size,
                                  shuffle=True, num_workers=4)
        val_loader = DataLoader(TensorDataset(X_val, y_val), batch_size=self.args.val_batch_size)
        squeeze = self.args.objective in ("regression", "binary")
        loss_history, val_loss_history = [], []
        min_val_loss, min_val_loss_idx = float("inf"), 0
        for epoch in range(self.args.epochs):
            for batch_X, batch_y in train_loader:
                out = self.model(batch_X.to(self.device))
                if squeeze:
                    out = out.squeeze()
                loss = loss_func(out, batch_y.to(self.device))
                loss_history.append(loss.item())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

            # early stopping on the validation loss
            self.model.eval()
            val_loss = 0.0
            val_dim = 0
            with torch.no_grad():
                for batch_val_X, batch_val_y in val_loader:
                    out = self.model(batch_val_X.to(self.device))
                    if squeeze:
                        out = out.squeeze()
                    val_loss += loss_func(out, batch_val_y.to(self.device))
                    val_dim += 1
            self.model.train()
            val_loss = val_loss.item() / val_dim
            val_loss_history.append(val_loss)
            print("Epoch %d, Val Loss: %.5f" % (epoch, val_loss))
            if val_loss < min_val_loss:
                min_val_loss, min_val_loss_idx = val_loss, epoch
                self.save_model("best")
            if min_val_loss_idx + self.args.early_stopping_rounds < epoch:
                print("Validation loss has not improved for %d steps!" % self.args.early_stopping_rounds)
                break
        self.load_model("best")
        return loss_history, val_loss_history

    def save_model(self, tag):
        torch.save(self.model.state_dict(), f"tmp/m_{tag}.pt")

    def load_model(self, tag):
        state_dict = torch.load(f"tmp/m_{tag}.pt", map_location=self.device)
        self.model.load_state_dict(state_dict)
