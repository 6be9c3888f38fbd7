# Source: https://github.com/oliverguhr/transformer-time-series-prediction/blob/0f937077d497c86d1488651cc27ee80d410c5984/transformer-singlestep.py
# Report: audit: plot_and_loss() grows test_result and truth with torch.cat((acc, new), 0) once per validation window (batch size 1), so each step copies the whole accumulated series again: quadratic copying over the val set
# Shape: no_grad validation over one-step windows; both accumulators are rebound from torch.cat of their previous value and the last predicted point, then plotted after the loop
# Expect: TML008 line 52; TML008 line 53
import math
import time

import torch
import torch.nn as nn
from matplotlib import pyplot

input_window = 100
batch_size = 10
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_batch(source, i, bs):
    # source: (N, 2, input_window) -> input/target of shape (input_window, B, 1)
    chunk = source[i:i + min(bs, len(source) - 1 - i)]
    return chunk[:, 0].t().unsqueeze(-1), chunk[:, 1].t().unsqueeze(-1)


def train(model, train_data, optimizer, criterion, epoch):
    model.train()
    total_loss, start = 0.0, time.time()
    log_interval = max(1, len(train_data) // batch_size // 5)
    for batch, i in enumerate(range(0, len(train_data) - 1, batch_size)):
        data, targets = get_batch(train_data, i, batch_size)
        optimizer.zero_grad()
        loss = criterion(model(data), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.7)
        optimizer.step()
        total_loss += loss.item()
        if batch % log_interval == 0 and batch > 0:
            cur = total_loss / log_interval
            print(f"| epoch {epoch:3d} | {batch:5d} batches | {(time.time() - start) * 1000 / log_interval:5.2f} ms "
                  f"| loss {cur:5.5f} | ppl {math.exp(cur):8.2f}")
            total_loss, start = 0.0, time.time()


def plot_and_loss(eval_model, data_source, criterion, epoch):
    eval_model.eval()
    total_loss = 0.0
    test_result = torch.Tensor(0)
    truth = torch.Tensor(0)
    with torch.no_grad():
        for i in range(0, len(data_source) - 1):
            data, target = get_batch(data_source, i, 1)
            output = eval_model(data)
            total_loss += criterion(output, target).item()
            test_result = torch.cat((test_result, output[-1].view(-1).cpu()), 0)  # expect: TML008
            truth = torch.cat((truth, target[-1].view(-1).cpu()), 0)  # expect: TML008
    pyplot.plot(test_result, color="red")
    pyplot.plot(truth[:500], color="blue")
    pyplot.plot(test_result - truth, color="green")
    pyplot.grid(True, which="both")
    pyplot.savefig("graph/transformer-epoch%d.png" % epoch)
    pyplot.close()
    return total_loss / i


def fit(model, train_data, val_data, epochs=100):
    criterion = nn.MSELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.005)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    for epoch in range(1, epochs + 1):
        train(model, train_data, optimizer, criterion, epoch)
        if epoch % 10 == 0:
            val_loss = plot_and_loss(model, val_data, criterion, epoch)
            print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.5f}")
        scheduler.step()
