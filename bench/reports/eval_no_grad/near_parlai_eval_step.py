# Source: https://github.com/facebookresearch/ParlAI/pull/1466
# Report: agents called self.model.eval() in eval_step but batch_act ran eval_step with autograd on, wasting memory and compute (worst with beam search)
# Shape: the fix: eval_step itself is unchanged (eval() then a forward, no decorator); batch_act wraps the call to it in `with torch.no_grad():`
# Expect: near-miss: must be silent
from collections import namedtuple

import torch
import torch.nn as nn

Batch = namedtuple("Batch", ["text_vec", "label_vec", "valid_indices"])
Output = namedtuple("Output", ["text"])


class TorchGeneratorAgent:
    def __init__(self, opt, model, dict_agent):
        self.opt = opt
        self.model = model.cuda()
        self.dict = dict_agent
        self.NULL_IDX = dict_agent.null_idx
        self.criterion = nn.CrossEntropyLoss(ignore_index=self.NULL_IDX, reduction="sum")
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=opt["learningrate"])
        self.metrics = {"loss": 0.0, "num_tokens": 0, "correct_tokens": 0}
        self.is_training = False

    def batchify(self, observations):
        text = nn.utils.rnn.pad_sequence([o["text_vec"] for o in observations],
                                         batch_first=True, padding_value=self.NULL_IDX)
        labels = None
        if all("labels_vec" in o for o in observations):
            labels = nn.utils.rnn.pad_sequence([o["labels_vec"] for o in observations],
                                               batch_first=True, padding_value=self.NULL_IDX)
            labels = labels.cuda()
        return Batch(text.cuda(), labels, list(range(len(observations))))

    def train_step(self, batch):
        self.model.train()
        self.optimizer.zero_grad()
        scores, _ = self.model(batch.text_vec, ys=batch.label_vec)
        loss = self.criterion(scores.view(-1, scores.size(-1)), batch.label_vec.view(-1))
        notnull = batch.label_vec.ne(self.NULL_IDX)
        self.metrics["loss"] += loss.item()
        self.metrics["num_tokens"] += notnull.long().sum().item()
        (loss / notnull.long().sum()).backward()
        self.optimizer.step()

    def eval_step(self, batch):
        self.model.eval()
        scores, preds = self.model(batch.text_vec, ys=batch.label_vec)
        if batch.label_vec is not None:
            loss = self.criterion(scores.view(-1, scores.size(-1)), batch.label_vec.view(-1))
            notnull = batch.label_vec.ne(self.NULL_IDX)
            self.metrics["loss"] += loss.item()
            self.metrics["num_tokens"] += notnull.long().sum().item()
            correct = ((batch.label_vec == preds) * notnull).sum().item()
            self.metrics["correct_tokens"] += correct
        text = [self.dict.vec2txt(p.tolist()) for p in preds.cpu()]
        return Output(text)

    def batch_act(self, observations):
        batch_reply = [{"id": "generator"} for _ in observations]
        batch = self.batchify(observations)
        self.is_training = any("labels" in obs for obs in observations)
        if self.is_training:
            output = self.train_step(batch)
        else:
            # disable autograd for every agent; use torch.enable_grad() to opt back in
            with torch.no_grad():
                output = self.eval_step(batch)
        if output is not None:
            for i, text in zip(batch.valid_indices, output.text):
                batch_reply[i]["text"] = text
        return batch_reply
