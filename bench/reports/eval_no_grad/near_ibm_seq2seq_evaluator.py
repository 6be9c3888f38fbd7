# Source: https://github.com/IBM/pytorch-seq2seq/blob/fede87655ddce6c94b38886089e05321dc9802af/seq2seq/evaluator/evaluator.py
# Report: release 0.1.6 (#137) of IBM/pytorch-seq2seq wrapped the dev-set loop of Evaluator.evaluate in torch.no_grad(); the shared Loss helper still sums criterion outputs on self.acc_loss
# Shape: no longer kept: the same self.acc_loss += criterion(...) hidden store now only sees values computed under no_grad; the trainer path resets the helper every batch and calls backward on the sum (intended accumulation)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torchtext

import seq2seq


class NLLLoss(object):
    _NAME = "Avg NLLLoss"

    def __init__(self, weight=None, mask=None):
        self.name = self._NAME
        self.mask = mask
        self.criterion = nn.NLLLoss(weight=weight)
        self.acc_loss = 0
        self.norm_term = 0

    def reset(self):
        self.acc_loss = 0
        self.norm_term = 0

    def eval_batch(self, outputs, target):
        self.acc_loss += self.criterion(outputs, target)
        self.norm_term += 1

    def get_loss(self):
        if isinstance(self.acc_loss, int):
            return 0
        return self.acc_loss.item() / self.norm_term

    def backward(self):
        self.acc_loss.backward()


class SupervisedTrainer(object):
    def __init__(self, loss, optimizer, batch_size=64):
        self.loss = loss
        self.optimizer = optimizer
        self.evaluator = Evaluator(loss=self.loss, batch_size=batch_size)

    def _train_batch(self, input_variable, input_lengths, target_variable, model):
        loss = self.loss
        decoder_outputs, decoder_hidden, other = model(input_variable, input_lengths, target_variable)
        loss.reset()
        for step, step_output in enumerate(decoder_outputs):
            batch_size = target_variable.size(0)
            loss.eval_batch(step_output.contiguous().view(batch_size, -1), target_variable[:, step + 1])
        model.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.get_loss()


class Evaluator(object):
    def __init__(self, loss=None, batch_size=64):
        self.loss = loss if loss is not None else NLLLoss()
        self.batch_size = batch_size

    def evaluate(self, model, data):
        model.eval()
        loss = self.loss
        loss.reset()
        match = 0
        total = 0
        batch_iterator = torchtext.data.BucketIterator(
            dataset=data, batch_size=self.batch_size,
            sort=True, sort_key=lambda x: len(x.src), train=False)
        pad = data.fields[seq2seq.tgt_field_name].vocab.stoi["<pad>"]

        with torch.no_grad():
            for batch in batch_iterator:
                input_variables, input_lengths = getattr(batch, seq2seq.src_field_name)
                target_variables = getattr(batch, seq2seq.tgt_field_name)
                decoder_outputs, decoder_hidden, other = model(input_variables, input_lengths.tolist(), target_variables)

                seqlist = other['sequence']
                for step, step_output in enumerate(decoder_outputs):
                    target = target_variables[:, step + 1]
                    # computed under no_grad: nothing to chain
                    loss.eval_batch(step_output.view(target_variables.size(0), -1), target)

                    non_padding = target.ne(pad)
                    match += seqlist[step].view(-1).eq(target).masked_select(non_padding).sum().item()
                    total += non_padding.sum().item()

        accuracy = float('nan') if total == 0 else match / total
        return loss.get_loss(), accuracy
