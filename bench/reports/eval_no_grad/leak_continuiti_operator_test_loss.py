# Source: https://github.com/aai-institute/continuiti/blob/main/src/continuiti/trainer/trainer.py
# Report: operator-learning Trainer.fit computes the per-epoch test loss after operator.eval() with no no_grad: every test batch builds the full autograd graph of the neural operator
# Shape: the loss object calls the operator inside its __call__ (loss_fn(operator, x, u, y, v)); the test loop is an evaluation loop with no backward and no grad-disabled context; the value is reduced with .detach().item(), so the cost is peak memory per batch, not growth
# Expect: TML003 line 78
import math

import torch
from torch.utils.data import DataLoader


class MSELoss:
    """Loss taking the operator itself: loss = mse(op(x, u, y), v)."""

    def __init__(self):
        self.mse = torch.nn.MSELoss()

    def __call__(self, op, x, u, y, v):
        v_pred = op(x, u, y)
        v_pred = v_pred.reshape(v.shape)
        return self.mse(v_pred, v)


class Logs:
    def __init__(self, epoch, step, loss_train, loss_test):
        self.epoch = epoch
        self.step = step
        self.loss_train = loss_train
        self.loss_test = loss_test


class OperatorTrainer:
    def __init__(self, operator, optimizer=None, lr=1e-3, loss_fn=None, device="cuda"):
        self.operator = operator
        self.optimizer = optimizer or torch.optim.Adam(operator.parameters(), lr=lr)
        self.loss_fn = loss_fn if loss_fn is not None else MSELoss()
        self.device = torch.device(device)

    def fit(self, dataset, epochs=1000, batch_size=32, test_dataset=None, callbacks=None, tol=1e-5):
        callbacks = callbacks or []
        operator = self.operator.to(self.device)
        data_loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        if test_dataset is not None:
            test_data_loader = DataLoader(test_dataset, batch_size=batch_size, shuffle=False)
        steps = math.ceil(len(dataset) / batch_size)

        loss_test = None
        logs = None
        for epoch in range(epochs):
            loss_train = 0
            logs = Logs(epoch=epoch + 1, step=0, loss_train=loss_train, loss_test=loss_test)

            operator.train()
            for xuyv in data_loader:
                xuyv = [t.to(self.device) for t in xuyv]

                def closure(xuyv=xuyv):
                    self.optimizer.zero_grad()
                    loss = self.loss_fn(operator, *xuyv)
                    loss.backward()
                    return loss

                loss = self.optimizer.step(closure)
                loss_train += loss.detach().item()

                logs.step += 1
                logs.loss_train = loss_train / logs.step
                for callback in callbacks:
                    callback.step(logs)
            if logs.step != steps:
                print(f"epoch {epoch + 1}: ran {logs.step}/{steps} steps")

            # test loss, once per epoch
            if test_dataset is not None:
                operator.eval()
                loss_test = 0
                for xuyv in test_data_loader:
                    xuyv = [t.to(self.device) for t in xuyv]
                    loss = self.loss_fn(operator, *xuyv)  # expect: TML003
                    loss_test += loss.detach().item()
                loss_test /= len(test_data_loader)

            logs.loss_test = loss_test
            for callback in callbacks:
                callback(logs)
            if logs.loss_train < tol:
                print("- stopping criterion met")
                break

        self.operator.to("cpu")
        return logs
