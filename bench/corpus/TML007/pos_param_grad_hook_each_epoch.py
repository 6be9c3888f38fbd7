# Modelled on: https://runebook.dev/ja/docs/pytorch/generated/torch.nn.module/torch.nn.Module.register_forward_hook
# Report: a hook stays registered and keeps running until it is explicitly removed; registering again each epoch stacks them.
import torch


def train(model, loader, optimizer, epochs, clip=1.0):
    for epoch in range(epochs):
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp(-clip, clip))  # expect: TML007
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
