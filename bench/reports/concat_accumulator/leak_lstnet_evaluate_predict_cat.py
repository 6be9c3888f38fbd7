# Source: https://github.com/laiguokun/LSTNet/blob/093c4dced7b7f7405be0620d65bb288b6d7ab4f0/main.py
# Report: audit of LSTNet's evaluate(): after model.eval() it loops over the validation/test windows with no no_grad and grows predict = torch.cat((predict, output)) and test = torch.cat((test, Y)) on the GPU every batch, so the concatenated forecasts carry every batch's autograd graph (all CNN/GRU activations) until the RSE/RAE/CORR numbers are computed at the end
# Shape: data object with get_batches() yielding CUDA windows and a scale tensor; evaluate() keeps running L2/L1 sums as floats and re-concatenates the predictions and targets each batch; train() is the usual per-batch loop
# Expect: TML008 line 24; TML001 line 24; TML008 line 25; TML003 line 19
import math

import torch
import torch.nn as nn


def evaluate(data, X, Y, model, evaluateL2, evaluateL1, batch_size):
    model.eval()
    total_loss = 0.0
    total_loss_l1 = 0.0
    n_samples = 0
    predict = None
    test = None
    for X, Y in data.get_batches(X, Y, batch_size, False):
        output = model(X)  # expect: TML003
        if predict is None:
            predict = output
            test = Y
        else:
            predict = torch.cat((predict, output))  # expect: TML008, TML001
            test = torch.cat((test, Y))  # expect: TML008
        scale = data.scale.expand(output.size(0), data.m)
        total_loss += evaluateL2(output * scale, Y * scale).item()
        total_loss_l1 += evaluateL1(output * scale, Y * scale).item()
        n_samples += output.size(0) * data.m
    rse = math.sqrt(total_loss / n_samples) / data.rse
    rae = (total_loss_l1 / n_samples) / data.rae

    predict = predict.detach().cpu().numpy()
    Ytest = test.cpu().numpy()
    sigma_p, sigma_g = predict.std(axis=0), Ytest.std(axis=0)
    mean_p, mean_g = predict.mean(axis=0), Ytest.mean(axis=0)
    index = sigma_g != 0
    correlation = ((predict - mean_p) * (Ytest - mean_g)).mean(axis=0) / (sigma_p * sigma_g)
    return rse, rae, correlation[index].mean()


def train(data, X, Y, model, criterion, optim, batch_size):
    model.train()
    total_loss = 0.0
    n_samples = 0
    for X, Y in data.get_batches(X, Y, batch_size, True):
        model.zero_grad()
        output = model(X)
        scale = data.scale.expand(output.size(0), data.m)
        loss = criterion(output * scale, Y * scale)
        loss.backward()
        optim.step()
        total_loss += loss.item()
        n_samples += output.size(0) * data.m
    return total_loss / n_samples


def fit(data, model, args):
    criterion = nn.MSELoss(reduction="sum").cuda()
    evaluateL2 = nn.MSELoss(reduction="sum").cuda()
    evaluateL1 = nn.L1Loss(reduction="sum").cuda()
    optim = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_val = float("inf")
    for epoch in range(1, args.epochs + 1):
        train_loss = train(data, data.train[0], data.train[1], model, criterion, optim, args.batch_size)
        val_rse, val_rae, val_corr = evaluate(data, data.valid[0], data.valid[1], model,
                                              evaluateL2, evaluateL1, args.batch_size)
        print(f"epoch {epoch:3d} | train {train_loss:.4f} | valid rse {val_rse:.4f} rae {val_rae:.4f} corr {val_corr:.4f}")
        if val_rse < best_val:
            best_val = val_rse
            torch.save(model.state_dict(), args.save)
    return best_val
