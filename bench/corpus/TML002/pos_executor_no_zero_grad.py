# Modelled on: https://github.com/wenet-e2e/wekws/pull/73
# Report: in the training executor, optimizer.step() was called every batch but optimizer.zero_grad() never was.
import torch
from torch.nn.utils import clip_grad_norm_


class Executor:
    def train(self, model, optimizer, data_loader, device, clip=5.0):
        model.train()
        for batch_idx, (feats, target, lengths) in enumerate(data_loader):
            feats = feats.to(device)
            target = target.to(device)
            logits = model(feats, lengths)
            loss = torch.nn.functional.cross_entropy(logits, target)
            loss.backward()
            clip_grad_norm_(model.parameters(), clip)
            optimizer.step()  # expect: TML002
