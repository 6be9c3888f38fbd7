# Source: https://github.com/yl4579/AuxiliaryASR/blob/main/trainer.py
# Report: ASR trainer (CTC + seq2seq heads): one-edit mistake of the repo code (the .item() reductions dropped from the dict run() returns); the repo has an open RAM-growth report (issue #14)
# Shape: run() returns the loss tensors themselves (graph attached); train_epoch appends each dict value into a defaultdict(list) that lives for the whole epoch, pinning every step's graph
# Expect: TML001 line 51
from collections import defaultdict

import numpy as np
import torch
from torch import nn


class ASRTrainer(object):
    def __init__(self, model, criterion, optimizer, scheduler, train_loader, device="cuda"):
        self.model = model
        self.criterion = criterion          # {"ctc": nn.CTCLoss(), "ce": nn.CrossEntropyLoss()}
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.train_loader = train_loader
        self.device = device

    def _lr(self):
        return self.optimizer.param_groups[0]["lr"]

    def run(self, batch):
        self.optimizer.zero_grad()
        batch = [b.to(self.device) for b in batch]
        tokens, token_lens, mels, mel_lens = batch
        mel_lens = mel_lens // (2 ** self.model.n_down)
        mel_mask = self.model.length_to_mask(mel_lens)
        ppgs, s2s_logits, s2s_attn = self.model(mels, src_key_padding_mask=mel_mask, text_input=tokens)

        ctc = self.criterion["ctc"](ppgs.log_softmax(dim=2).transpose(0, 1), tokens, mel_lens, token_lens)
        s2s = 0
        for logits, target, length in zip(s2s_logits, tokens, token_lens):
            s2s += self.criterion["ce"](logits[:length], target[:length])
        s2s /= tokens.size(0)

        loss = ctc + s2s
        loss.backward()
        nn.utils.clip_grad_value_(self.model.parameters(), 5)
        self.optimizer.step()
        self.scheduler.step()
        return {"loss": loss, "ctc": ctc, "s2s": s2s}

    def train_epoch(self):
        history = defaultdict(list)
        self.model.train()
        for step, batch in enumerate(self.train_loader, 1):
            out = self.run(batch)
            for name, value in out.items():
                history["train/%s" % name].append(value)  # expect: TML001
        summary = {name: np.mean(vals) for name, vals in history.items()}
        summary["train/learning_rate"] = self._lr()
        return summary
