# Source: https://github.com/HumanCompatibleAI/il-representations/blob/006a390612e18e3f61b906c2f94077d166246ce2/src/il_representations/algos/representation_learner.py
# Report: audit: RepresentationLearner.learn() passed the graph-attached contrastive loss tensor to AverageMeter.update; the upstream fix ("Fix loss.item()") takes loss.item() first, deletes the tensor and meters the float
# Shape: same epoch-long meter that sums what it is given, but it is handed loss_item, a Python float taken before backward
# Expect: near-miss: must be silent
import os

import torch
from torch.utils.data import DataLoader


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.sum = 0
        self.count = 0
        self.avg = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class RepresentationLearner:
    def __init__(self, encoder, decoder, loss_calculator, augmenter, log_dir,
                 batch_size=256, lr=1e-3, device="cuda"):
        self.device = torch.device(device)
        self.encoder = encoder.to(self.device)
        self.decoder = decoder.to(self.device)
        self.loss_calculator = loss_calculator
        self.augmenter = augmenter
        self.batch_size = batch_size
        params = list(self.encoder.parameters()) + list(self.decoder.parameters())
        self.optimizer = torch.optim.Adam(params, lr=lr)
        self.ckpt_dir = os.path.join(log_dir, "checkpoints")
        os.makedirs(self.ckpt_dir, exist_ok=True)

    def _prep(self, x):
        return None if x is None else x.to(self.device).float() / 127.5 - 1.0

    def learn(self, dataset, training_epochs, logger=None):
        loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True, drop_last=True)
        loss_record = []
        global_step = 0
        for epoch in range(training_epochs):
            loss_meter = AverageMeter()
            self.encoder.train()
            self.decoder.train()
            for step, batch in enumerate(loader):
                contexts = self._prep(batch["context"])
                targets = self._prep(batch["target"])
                contexts, targets = self.augmenter(contexts, targets)

                encoded_contexts = self.encoder.encode_context(contexts)
                encoded_targets = self.encoder.encode_target(targets)
                decoded_contexts = self.decoder.decode_context(encoded_contexts)
                decoded_targets = self.decoder.decode_target(encoded_targets)
                loss = self.loss_calculator(decoded_contexts, decoded_targets, encoded_contexts)
                loss_item = loss.item()

                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                del loss

                loss_meter.update(loss_item)
                if logger is not None:
                    logger.record("loss", loss_item)
                    logger.record("epoch", epoch)
                    logger.dump(step=global_step)
                global_step += 1

            loss_record.append(float(loss_meter.avg))
            self.encoder.eval()
            self.decoder.eval()
            torch.save(self.encoder.state_dict(), os.path.join(self.ckpt_dir, f"encoder_{epoch}.pt"))
        return loss_record
