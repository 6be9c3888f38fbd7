# Source: https://github.com/pdebench/PDEBench/blob/044a823d48d5d2d13fbc4928c6bb5e12ddff045e/pdebench/models/fno/train.py
# Report: audited autoregressive FNO training loop: every rollout step grows the full prediction tensor with pred = torch.cat((pred, im), -2) inside the time loop.
# Shape: same rollout: the window xx slides (constant size, rebuilt from the loader each batch, backward once per batch) while pred is re-concatenated each step, copying all previous steps again.
# Expect: TML008 line 35
import torch
import torch.nn as nn

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def train_epoch(model, train_loader, optimizer, initial_step, t_train):
    loss_fn = nn.MSELoss(reduction="mean")
    model.train()
    train_l2_step = 0
    train_l2_full = 0
    for xx, yy, grid in train_loader:
        loss = 0
        xx = xx.to(device)
        yy = yy.to(device)
        grid = grid.to(device)

        # prediction tensor starts with the given initial steps
        pred = yy[..., :initial_step, :]
        inp_shape = list(xx.shape)[:-2]
        inp_shape.append(-1)

        for t in range(initial_step, t_train):
            inp = xx.reshape(inp_shape)
            y = yy[..., t:t + 1, :]
            im = model(inp, grid)

            _batch = im.size(0)
            loss += loss_fn(im.reshape(_batch, -1), y.reshape(_batch, -1))

            pred = torch.cat((pred, im), -2)  # expect: TML008
            xx = torch.cat((xx[..., 1:, :], im), dim=-2)

        train_l2_step += loss.item()
        _batch = yy.size(0)
        _yy = yy[..., :t_train, :]
        l2_full = loss_fn(pred.reshape(_batch, -1), _yy.reshape(_batch, -1))
        train_l2_full += l2_full.item()

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return train_l2_step, train_l2_full
