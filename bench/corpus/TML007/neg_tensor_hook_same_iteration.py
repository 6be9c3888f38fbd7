# Modelled on: https://github.com/chr5tphr/zennit/pull/13
# Report: near-miss: a hook on an intermediate tensor created in this iteration dies with the tensor.
import torch


def train(model, loader, optimizer, grad_log):
    for x, y in loader:
        feats = model.backbone(x)
        feats.register_hook(lambda g: grad_log.append(g.norm().item()))
        loss = torch.nn.functional.cross_entropy(model.head(feats), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
