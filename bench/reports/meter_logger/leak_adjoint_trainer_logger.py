# Source: https://github.com/iamyixuan/DeepAdjoint/blob/0196a410022a68cbef3cab08a1bd6c47ba8f14c2/AdjointMatchingNN/train/trainer.py
# Report: audit: Trainer.eval() switches the surrogate to eval() and runs the test forward without no_grad (kept as found); the repo's Logger.record only ever gets .item()/numpy values, and this variant hands it the step's loss tensor, the shape the repo avoided, so the dict of lists keeps every step's graph-attached loss
# Shape: trainer class owning a Logger whose record() appends to a dict of lists; the training loop records the raw batch loss each step, and eval() is a method that calls self.net after self.net.eval() with no grad-disabled context
# Expect: TML001 line 48; TML003 line 59
import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class Logger:
    def __init__(self):
        self.logger = {"epoch": [], "step_loss": [], "train_loss": [], "val_loss": []}

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
            epoch_loss = 0.0
            for x_train, y_train in tqdm(train_loader):
                x_train, y_train = x_train.to(self.device), y_train.to(self.device)
                optimizer.zero_grad()
                out = self.net(x_train)
                batch_loss = self.ls_fn(y_train, out)
                batch_loss.backward()
                optimizer.step()
                epoch_loss += batch_loss.item()
                self.logger.record("step_loss", batch_loss)  # expect: TML001
            with torch.no_grad():
                val_loss = self.ls_fn(y_val, self.net(x_val))
            self.logger.record("epoch", ep + 1)
            self.logger.record("train_loss", epoch_loss / len(train_loader))
            self.logger.record("val_loss", val_loss.item())
            self.logger.print()

    def eval(self, test_set):
        self.net.eval()
        x_test, y_test = test_set
        pred_test = self.net(x_test.to(self.device))  # expect: TML003
        rel_err = (pred_test - y_test.to(self.device)).norm() / y_test.to(self.device).norm()
        return pred_test.detach().cpu().numpy(), rel_err.item()
