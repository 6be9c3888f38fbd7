# Source: https://github.com/espnet/espnet/issues/191
# Report: ESPnet's pytorch backend ran out of GPU memory during validation of an attention+CTC ASR model (the evaluator ran the loss forward without disabling grad; fixed by the maintainers' patch #192, and PR #250 notes volatile is a no-op in torch 0.4 so evaluation needs torch.no_grad()).
# Shape: chainer Evaluator subclass whose evaluate() calls model.eval() and then the Loss module forward per batch with grad enabled; values are reported as floats, so the cost is the saved activations of every validation batch (higher peak, OOM on long utterances).
# Expect: TML003 line 61
import copy
import logging
import math

import torch
from chainer import reporter as reporter_module
from chainer.training import extensions

from asr_utils import converter_kaldi, delete_feat

CTC_LOSS_THRESHOLD = 10000


class Loss(torch.nn.Module):
    def __init__(self, predictor, mtlalpha, reporter):
        super().__init__()
        self.predictor = predictor
        self.mtlalpha = mtlalpha
        self.reporter = reporter

    def forward(self, x):
        loss_ctc, loss_att, acc = self.predictor(x)
        alpha = self.mtlalpha
        loss = alpha * loss_ctc + (1 - alpha) * loss_att
        loss_value = float(loss)
        if loss_value < CTC_LOSS_THRESHOLD and not math.isnan(loss_value):
            self.reporter.report(float(loss_ctc), float(loss_att), acc, loss_value)
        else:
            logging.warning("loss (=%f) is not correct", loss_value)
        return loss


class PytorchSeqEvaluaterKaldi(extensions.Evaluator):
    """Custom evaluator with Kaldi reader for pytorch."""

    def __init__(self, model, iterator, target, reader, device):
        super().__init__(iterator, target, device=device)
        self.reader = reader
        self.model = model

    def evaluate(self):
        iterator = self._iterators["main"]
        if self.eval_hook:
            self.eval_hook(self)
        if hasattr(iterator, "reset"):
            iterator.reset()
            it = iterator
        else:
            it = copy.copy(iterator)

        summary = reporter_module.DictSummary()
        self.model.eval()
        for batch in it:
            observation = {}
            with reporter_module.report_scope(observation):
                x = converter_kaldi(batch[0], self.reader)
                self.model(x)  # expect: TML003
                delete_feat(x)
            summary.add(observation)
        self.model.train()
        return summary.compute_mean()
