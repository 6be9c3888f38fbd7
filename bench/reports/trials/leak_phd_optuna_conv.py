# Source: https://github.com/c-whitley/PHD/blob/master/DL/1D_Convolutional_Net/conv_utils.py
# Report: Optuna study over 1-D conv nets (upstream test_loop is under torch.no_grad()); here test_loop loses the no_grad block and only .detach()es the probabilities it hands to sklearn.
# Shape: test_loop (after model.eval(), over the test loader, never calls backward) runs model(X) with grad on every epoch of every trial: activations saved for a backward that never comes (peak); only floats leave, so no growth.
# Expect: TML003 line 48
import optuna
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from sklearn.metrics import roc_auc_score

train_dataset = None
test_dataset = None


class SpecConvNet(nn.Module):
    def __init__(self, h_params):
        super().__init__()
        layers = []
        chans = h_params["chan_list"]
        for i in range(h_params["n_conv_layers"]):
            layers += [nn.Conv1d(chans[i], chans[i + 1], 5), nn.ReLU(), nn.MaxPool1d(h_params["pool_list"][i])]
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.LazyLinear(h_params["fc_neurons"]), nn.ReLU(),
                                  nn.Dropout(h_params["dropout"]), nn.Linear(h_params["fc_neurons"], 1), nn.Sigmoid())

    def forward(self, x):
        return self.head(self.features(x)).squeeze(-1)


def train_loop(dataloader, model, loss_fn, optimizer):
    model.train()
    size = len(dataloader.dataset)
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch % 10 == 0:
            print(f"loss: {loss.item():>7f}  [{batch * len(X):>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    num_batches = len(dataloader)
    test_loss, auc = 0.0, 0.0
    for X, y in dataloader:
        pred = model(X)  # expect: TML003
        test_loss += loss_fn(pred, y).item()
        probs = pred.detach().numpy().squeeze()
        auc = roc_auc_score(y.numpy().squeeze(), probs)
    test_loss /= num_batches
    print(f"test loss {test_loss:.4f}  auc {auc:.3f}")
    return auc


def conv_objective(trial, epochs=5):
    h_params = {"n_conv_layers": trial.suggest_int("n_conv_layers", 2, 5)}
    h_params["chan_list"] = [1] + [int(trial.suggest_float(f"num_filter_{i}", 16, 128, step=16))
                                   for i in range(h_params["n_conv_layers"])]
    h_params["pool_list"] = [int(trial.suggest_float(f"pool_{i}", 3, 9, step=2))
                             for i in range(h_params["n_conv_layers"])]
    h_params["fc_neurons"] = int(trial.suggest_float("fc_neurons", 16, 512, step=16))
    h_params["dropout"] = trial.suggest_float("dropout", 0.25, 0.9)

    model = SpecConvNet(h_params)
    loss_fn = nn.BCELoss()
    train_dataloader = DataLoader(train_dataset, batch_size=128, shuffle=True)
    test_dataloader = DataLoader(test_dataset, batch_size=128, shuffle=True)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    score = 0.0
    for epoch in range(epochs):
        train_loop(train_dataloader, model, loss_fn, optimizer)
        score = test_loop(test_dataloader, model, loss_fn)
        trial.report(score, epoch)
        if trial.should_prune():
            raise optuna.exceptions.TrialPruned()
    return score


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize")
    study.optimize(conv_objective, n_trials=100)
    print(study.best_trial.params)
