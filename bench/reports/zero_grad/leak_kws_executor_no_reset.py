# Source: https://github.com/wenet-e2e/wekws/issues/72
# Report: keyword-spotting executor calls loss.backward() and optimizer.step() every batch but never zero_grad(); maintainer confirmed it is a bug
# Shape: Executor.train method, clip_grad_norm_ guard around step, loss logged with .item(); no gradient reset anywhere in the loop
# Expect: TML002 line 34
import logging

import torch
from torch.nn.utils import clip_grad_norm_


class Executor:
    def __init__(self):
        self.step = 0

    def train(self, model, optimizer, data_loader, device, writer, args):
        """Train one epoch."""
        model.train()
        clip = args.get("grad_clip", 50.0)
        log_interval = args.get("log_interval", 10)
        epoch = args.get("epoch", 0)
        criterion = args["criterion"]
        for batch_idx, batch in enumerate(data_loader):
            key, feats, target, feats_lengths = batch
            feats = feats.to(device)
            target = target.to(device)
            feats_lengths = feats_lengths.to(device)
            if target.size(0) == 0:
                continue
            logits, _ = model(feats)
            loss, acc = criterion(logits, target, feats_lengths)
            loss.backward()
            grad_norm = clip_grad_norm_(model.parameters(), clip)
            if torch.isfinite(grad_norm):
                optimizer.step()  # expect: TML002
            if batch_idx % log_interval == 0:
                logging.debug(
                    "TRAIN Batch %d/%d loss %.8f acc %.8f",
                    epoch, batch_idx, loss.item(), acc,
                )
                if writer is not None:
                    writer.add_scalar("train_loss", loss.item(), self.step)
            self.step += 1
