# Modelled on: https://github.com/wenet-e2e/wekws/pull/73
# Report: the fix (as suggested in review) puts optimizer.zero_grad() before loss.backward().
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
            optimizer.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
