# Modelled on: https://github.com/GaTech-RL2/EgoVerse/pull/166
# Report: an exponential moving average of the loss was introduced in the training loop and then reverted.
import torch


def train(model, loader, optimizer, decay=0.98):
    smooth_loss = None
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if smooth_loss is None:
            smooth_loss = loss
        else:
            smooth_loss = decay * smooth_loss + (1 - decay) * loss  # expect: TML005
        if step % 100 == 0:
            print(step, float(smooth_loss))
