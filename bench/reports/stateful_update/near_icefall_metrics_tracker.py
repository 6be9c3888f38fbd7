# Source: https://github.com/k2-fsa/icefall/blob/47565959d93e2355df5de1f7c9eecca81511eda7/egs/librispeech/ASR/conformer_ctc/train.py
# Report: audited code, no leak there: conformer_ctc/train.py stores `info["loss"] = loss.detach().cpu().item()` before the MetricsTracker reaches the running tot_loss
# Shape: same decaying tot_loss tracker rebuilt from its previous value every batch, but every entry compute_loss puts in the dict is a Python number
# Expect: near-miss: must be silent

import collections
import logging

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class MetricsTracker(collections.defaultdict):
    def __init__(self):
        super(MetricsTracker, self).__init__(int)

    def __add__(self, other: "MetricsTracker") -> "MetricsTracker":
        ans = MetricsTracker()
        for k, v in self.items():
            ans[k] = v
        for k, v in other.items():
            ans[k] = ans[k] + v
        return ans

    def __mul__(self, alpha: float) -> "MetricsTracker":
        ans = MetricsTracker()
        for k, v in self.items():
            ans[k] = v * alpha
        return ans

    def __str__(self) -> str:
        frames = self["frames"] if self["frames"] else 1
        return ", ".join(f"{k}={float(v) / frames:.4g}" for k, v in self.items() if k != "frames")


def compute_loss(params, model: nn.Module, batch: dict, graph_compiler, is_training: bool):
    device = graph_compiler.device
    feature = batch["inputs"].to(device)
    supervisions = batch["supervisions"]
    with torch.set_grad_enabled(is_training):
        nnet_output, encoder_memory, memory_mask = model(feature, supervisions)
    token_ids = graph_compiler.texts_to_ids(supervisions["text"])
    ctc_loss = graph_compiler.ctc_loss(nnet_output, token_ids, supervisions)
    if params.att_rate != 0.0:
        with torch.set_grad_enabled(is_training):
            att_loss = model.decoder_forward(encoder_memory, memory_mask, token_ids=token_ids)
        loss = (1.0 - params.att_rate) * ctc_loss + params.att_rate * att_loss
    else:
        loss = ctc_loss

    info = MetricsTracker()
    info["frames"] = supervisions["num_frames"].sum().item()
    info["ctc_loss"] = ctc_loss.detach().cpu().item()
    info["loss"] = loss.detach().cpu().item()
    info["utterances"] = feature.size(0)
    return loss, info


def train_one_epoch(params, model, optimizer, graph_compiler, train_dl, tb_writer=None):
    model.train()
    tot_loss = MetricsTracker()
    for batch_idx, batch in enumerate(train_dl):
        params.batch_idx_train += 1
        batch_size = len(batch["supervisions"]["text"])
        loss, loss_info = compute_loss(
            params=params,
            model=model,
            batch=batch,
            graph_compiler=graph_compiler,
            is_training=True,
        )
        # summary stats
        tot_loss = (tot_loss * (1 - 1 / params.reset_interval)) + loss_info

        optimizer.zero_grad()
        loss.backward()
        clip_grad_norm_(model.parameters(), 5.0, 2.0)
        optimizer.step()

        if batch_idx % params.log_interval == 0:
            logging.info(
                f"Epoch {params.cur_epoch}, batch {batch_idx}, "
                f"loss[{loss_info}], tot_loss[{tot_loss}], batch size: {batch_size}"
            )

    params.train_loss = tot_loss["loss"] / tot_loss["frames"]
    if params.train_loss < params.best_train_loss:
        params.best_train_epoch = params.cur_epoch
        params.best_train_loss = params.train_loss
