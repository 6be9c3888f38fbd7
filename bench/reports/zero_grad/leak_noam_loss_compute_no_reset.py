# Source: https://github.com/harvardnlp/annotated-transformer/blob/df6e38155aa2ed2c8aabff426c0914a617ef7c80/src/train.py
# Report: audit: SimpleLossCompute.__call__ backprops, calls the NoamOpt wrapper's step() and then resets through self.opt.optimizer.zero_grad(); this is the variant that reset avoided, the helper steps the wrapper and never clears the gradients
# Shape: run_epoch() calls a loss-compute object per batch whose __call__ does backward() and the Noam wrapper's step(); no zero_grad anywhere, so every update uses the sum of all earlier batches' gradients
# Expect: TML002 line 55
import time

import torch
import torch.nn as nn


class Batch:
    def __init__(self, src, tgt, pad=0):
        self.src = src
        self.src_mask = (src != pad).unsqueeze(-2)
        self.tgt = tgt[:, :-1]
        self.tgt_y = tgt[:, 1:]
        causal = torch.tril(torch.ones(self.tgt.size(1), self.tgt.size(1), dtype=torch.bool, device=tgt.device))
        self.tgt_mask = (self.tgt != pad).unsqueeze(-2) & causal
        self.ntokens = int((self.tgt_y != pad).sum())


class NoamOpt:
    """Optimizer wrapper that sets the warmup / inverse-sqrt learning rate before each step."""

    def __init__(self, model_size, factor, warmup, optimizer):
        self.optimizer = optimizer
        self.model_size = model_size
        self.factor = factor
        self.warmup = warmup
        self._step = 0

    def rate(self, step=None):
        step = step or self._step
        return self.factor * self.model_size ** -0.5 * min(step ** -0.5, step * self.warmup ** -1.5)

    def step(self):
        self._step += 1
        lr = self.rate()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()


class LossCompute:
    def __init__(self, generator, criterion, opt=None):
        self.generator = generator
        self.criterion = criterion
        self.opt = opt

    def __call__(self, out, target, norm):
        logits = self.generator(out)
        loss = self.criterion(logits.reshape(-1, logits.size(-1)), target.reshape(-1)) / norm
        if self.opt is not None:
            loss.backward()
            self.opt.step()  # expect: TML002
        return loss.item() * norm


def run_epoch(batches, model, loss_compute, log_every=50):
    start, total_loss, total_tokens, tokens = time.time(), 0.0, 0, 0
    for i, batch in enumerate(batches):
        out = model(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        loss = loss_compute(out, batch.tgt_y, batch.ntokens)
        total_loss += loss
        total_tokens += batch.ntokens
        tokens += batch.ntokens
        if i % log_every == 1:
            print(f"step {i} loss {loss / batch.ntokens:.4f} tok/s {tokens / (time.time() - start):.1f}")
            start, tokens = time.time(), 0
    return total_loss / max(total_tokens, 1)


def train(model, make_train_batches, make_valid_batches, d_model=512, pad=0, epochs=10):
    criterion = nn.CrossEntropyLoss(ignore_index=pad, label_smoothing=0.1, reduction="sum")
    adam = torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98), eps=1e-9)
    opt = NoamOpt(d_model, 2, 4000, adam)
    for epoch in range(epochs):
        model.train()
        run_epoch(make_train_batches(), model, LossCompute(model.generator, criterion, opt))
        model.eval()
        with torch.no_grad():
            val = run_epoch(make_valid_batches(), model, LossCompute(model.generator, criterion, None))
        print(f"epoch {epoch} valid loss/token {val:.4f}")
