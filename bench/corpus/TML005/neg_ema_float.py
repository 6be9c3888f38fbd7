# Modelled on: https://github.com/GaTech-RL2/EgoVerse/pull/166
# Report: near-miss: the moving average is kept as a Python float.
import torch


def train(model, loader, optimizer, decay=0.98):
    smooth_loss = 0.0
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        smooth_loss = decay * smooth_loss + (1 - decay) * loss.item()
        if step % 100 == 0:
            print(step, smooth_loss)
