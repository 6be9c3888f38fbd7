# Source: https://github.com/pyg-team/pytorch_geometric/blob/master/examples/contrib/graphwavenet/model.py
# Report: GraphWaveNet traffic forecasting example (fixed variant): the engine's eval() runs its forward under torch.no_grad() and test predictions are moved to the CPU before they are kept
# Shape: Engine.eval still returns only .item() floats to the per-epoch lists; the forward is grad-disabled, and each test batch is .cpu()'d before outputs.append, with the test targets kept on the CPU
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.optim as optim


def masked_mae(preds, labels, null_val=0.0):
    mask = (labels != null_val).float()
    mask = mask / torch.mean(mask)
    loss = torch.abs(preds - labels) * mask
    return torch.mean(torch.nan_to_num(loss))


def masked_rmse(preds, labels, null_val=0.0):
    mask = (labels != null_val).float()
    mask = mask / torch.mean(mask)
    return torch.sqrt(torch.mean(torch.nan_to_num((preds - labels) ** 2 * mask)))


class StandardScaler:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def inverse_transform(self, data):
        return data * self.std + self.mean


class Engine:
    def __init__(self, net, scaler, lrate, wdecay, edge_index, edge_weight):
        self.net = net
        self.optimizer = optim.Adam(self.net.parameters(), lr=lrate, weight_decay=wdecay)
        self.loss = masked_mae
        self.scaler = scaler
        self.clip = 5
        self.edge_index, self.edge_weight = edge_index, edge_weight

    def train(self, inp, real_val):
        self.net.train()
        self.optimizer.zero_grad()
        output = self.net(inp.transpose(-3, -1), self.edge_index, self.edge_weight)
        predict = self.scaler.inverse_transform(output.transpose(-3, -1))
        real = real_val.unsqueeze(1)
        loss = self.loss(predict, real, 0.0)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)
        self.optimizer.step()
        rmse = masked_rmse(predict, real, 0.0).item()
        return loss.item(), rmse

    def eval(self, inp, real_val):
        self.net.eval()
        with torch.no_grad():
            output = self.net(inp.transpose(-3, -1), self.edge_index, self.edge_weight)
            predict = self.scaler.inverse_transform(output.transpose(-3, -1))
            real = real_val.unsqueeze(1)
            loss = self.loss(predict, real, 0.0)
            rmse = masked_rmse(predict, real, 0.0).item()
        return loss.item(), rmse


def run(engine, dataloader, device, epochs, save_dir):
    his_loss = []
    best_epoch = 1
    for epoch in range(1, epochs + 1):
        train_loss, train_rmse = [], []
        t1 = time.time()
        for x, y in dataloader["train_loader"]:
            trainx = torch.as_tensor(x, dtype=torch.float32).to(device).transpose(1, 3)
            trainy = torch.as_tensor(y, dtype=torch.float32).to(device).transpose(1, 3)
            metrics = engine.train(trainx, trainy[:, 0, :, :])
            train_loss.append(metrics[0])
            train_rmse.append(metrics[1])
        valid_loss, valid_rmse = [], []
        for x, y in dataloader["val_loader"]:
            testx = torch.as_tensor(x, dtype=torch.float32).to(device).transpose(1, 3)
            testy = torch.as_tensor(y, dtype=torch.float32).to(device).transpose(1, 3)
            metrics = engine.eval(testx, testy[:, 0, :, :])
            valid_loss.append(metrics[0])
            valid_rmse.append(metrics[1])
        his_loss.append(np.mean(valid_loss))
        if np.argmin(his_loss) == len(his_loss) - 1:
            torch.save(engine.net.state_dict(), f"{save_dir}/epoch_{epoch}.pth")
            best_epoch = epoch
        print(f"Epoch {epoch:03d} train {np.mean(train_loss):.4f} "
              f"valid {np.mean(valid_loss):.4f} ({time.time() - t1:.1f}s)")
    return best_epoch


def test(engine, dataloader, device, scaler):
    outputs = []
    realy = torch.as_tensor(dataloader["y_test"], dtype=torch.float32)
    realy = realy.transpose(1, 3)[:, 0, :, :]
    for x, _ in dataloader["test_loader"]:
        testx = torch.as_tensor(x, dtype=torch.float32).to(device).transpose(1, 3)
        with torch.no_grad():
            preds = engine.net(testx, engine.edge_index, engine.edge_weight)
            preds = preds.transpose(1, 3)
        outputs.append(preds.squeeze().cpu())
    yhat = torch.cat(outputs, dim=0)[:realy.size(0), ...]
    for h in range(12):
        pred = scaler.inverse_transform(yhat[:, :, h])
        print(h + 1, masked_mae(pred, realy[:, :, h]).item())
