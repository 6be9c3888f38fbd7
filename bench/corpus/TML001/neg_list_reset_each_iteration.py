# Modelled on: https://github.com/IBM/mi-prometheus/issues/111
# Report: near-miss: per-iteration loss components are collected in a list that is rebuilt every iteration, so nothing outlives the step.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, aux_weights=(1.0, 0.4)):
    for images, masks in loader:
        optimizer.zero_grad()
        main_out, aux_out = model(images)
        parts = []
        parts.append(aux_weights[0] * F.cross_entropy(main_out, masks))
        parts.append(aux_weights[1] * F.cross_entropy(aux_out, masks))
        loss = sum(parts)
        loss.backward()
        optimizer.step()
