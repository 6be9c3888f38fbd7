# Source: https://github.com/iamyixuan/DeepAdjoint/blob/0196a410022a68cbef3cab08a1bd6c47ba8f14c2/AdjointMatchingNN/train/trainer.py
# Report: audit: the repo's Logger.record appends whatever it is given to a dict of lists, and the trainer only gives it numbers (np.mean of detached numpy step losses, val_loss.item()); its eval() ran without no_grad, fixed here with the decorator
# Shape: same trainer and Logger; each step keeps batch_loss.detach().cpu().numpy() in a local list reset every epoch, record() only receives Python/numpy numbers, and eval() is decorated with @torch.no_grad()
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class Logger:
    def __init__(self):
        self.logger = {"epoch": [], "train_loss": [], "val_loss": []}

    def record(self, key, value):
        self.logger[key].append(value)

    def print(self):
        print("Epoch: %d, train loss: %.4f, val loss: %.4f" % (
            self.logger["epoch"][-1], self.logger["train_loss"][-1], self.logger["val_loss"][-1]))


class Trainer:
    def __init__(self, net, loss_fn, lr=1e-3):
        self.net = net
        self.ls_fn = loss_fn
        self.lr = lr
        self.logger = Logger()
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def train(self, train_set, val_set, epochs, batch_size):
        self.net.to(self.device)
        optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
        x_val, y_val = next(iter(DataLoader(val_set, batch_size=10)))
        x_val, y_val = x_val.to(self.device), y_val.to(self.device)
        for ep in range(epochs):
            self.net.train()
            running_loss = []
            for x_train, y_train in tqdm(train_loader):
                x_train, y_train = x_train.to(self.device), y_train.to(self.device)
                optimizer.zero_grad()
                out = self.net(x_train)
                batch_loss = self.ls_fn(y_train, out)
                batch_loss.backward()
                optimizer.step()
                running_loss.append(batch_loss.detach().cpu().numpy())
            with torch.no_grad():
                val_loss = self.ls_fn(y_val, self.net(x_val))
            self.logger.record("epoch", ep + 1)
            self.logger.record("train_loss", np.mean(running_loss))
            self.logger.record("val_loss", val_loss.item())
            self.logger.print()

    @torch.no_grad()
    def eval(self, test_set):
        self.net.eval()
        x_test, y_test = test_set
        pred_test = self.net(x_test.to(self.device))
        rel_err = (pred_test - y_test.to(self.device)).norm() / y_test.to(self.device).norm()
        return pred_test.cpu().numpy(), rel_err.item()
