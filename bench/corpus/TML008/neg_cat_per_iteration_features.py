# Modelled on: https://github.com/lotus-data/lotus/pull/16
# Report: near-miss: torch.cat combines two fresh tensors of the same iteration; nothing grows across iterations.
import torch


def train(model, loader, optimizer):
    for left, right, target in loader:
        pair = torch.cat([left, right], dim=1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(pair), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
