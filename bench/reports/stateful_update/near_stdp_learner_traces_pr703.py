# Source: https://github.com/fangwei123456/spikingjelly/pull/703
# Report: STDP learner monitors recorded graph-connected spikes; the recurrent pre/post traces and the delta_w written into weight.grad chained every batch's forward graph, so memory grew until OOM.
# Shape: the fix: the hooks record detached spikes, so the traces rebound in step() and the delta_w written into weight.grad carry no graph.
# Expect: near-miss: must be silent
import torch
from torch import nn


def stdp_linear_single_step(fc, in_spike, out_spike, trace_pre, trace_post,
                            tau_pre, tau_post, f_pre, f_post):
    if trace_pre is None:
        trace_pre = 0.0
    if trace_post is None:
        trace_post = 0.0
    trace_pre = trace_pre - trace_pre / tau_pre + in_spike
    trace_post = trace_post - trace_post / tau_post + out_spike
    delta_w = (trace_pre.unsqueeze(1) * out_spike.unsqueeze(2)).sum(0) * f_pre(fc.weight)
    delta_w = delta_w - (in_spike.unsqueeze(1) * trace_post.unsqueeze(2)).sum(0) * f_post(fc.weight)
    return trace_pre, trace_post, delta_w


class STDPLearner:
    def __init__(self, synapse, sn, tau_pre=2.0, tau_post=2.0):
        self.synapse = synapse
        self.tau_pre, self.tau_post = tau_pre, tau_post
        self.in_records, self.out_records = [], []
        synapse.register_forward_hook(lambda m, inp, out: self.in_records.append(inp[0].detach()))
        sn.register_forward_hook(lambda m, inp, out: self.out_records.append(out.detach()))
        self.trace_pre = None
        self.trace_post = None

    def reset(self):
        self.trace_pre = None
        self.trace_post = None
        self.in_records.clear()
        self.out_records.clear()

    def step(self, on_grad=True, scale=1.0):
        delta_w = None
        while self.in_records:
            in_spike = self.in_records.pop(0)
            out_spike = self.out_records.pop(0)
            self.trace_pre, self.trace_post, dw = stdp_linear_single_step(
                self.synapse, in_spike, out_spike, self.trace_pre, self.trace_post,
                self.tau_pre, self.tau_post, lambda w: 1.0, lambda w: 1.0)
            dw = dw * scale
            delta_w = dw if delta_w is None else delta_w + dw
        if on_grad:
            if self.synapse.weight.grad is None:
                self.synapse.weight.grad = -delta_w
            else:
                self.synapse.weight.grad = self.synapse.weight.grad - delta_w
        return delta_w


def train_stdp(net, learner, loader, optimizer, epochs):
    for _ in range(epochs):
        for img, _label in loader:
            optimizer.zero_grad()
            net(img)
            learner.step(on_grad=True)
            optimizer.step()
        learner.reset()
