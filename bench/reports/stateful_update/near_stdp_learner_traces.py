# Source: https://github.com/fangwei123456/spikingjelly/issues/576
# Report: during a grid search, every run that trained with STDPLearner left its tensors behind until CUDA ran out of memory; step() ran with grad enabled, so the recurrent pre/post traces and the weight.grad it writes carried the forward graph of the recorded spikes from batch to batch
# Shape: the maintainer's remedy applied inside the learner: step() runs under @torch.no_grad(), so the carried traces and the weight.grad it writes hold no graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class OutputMonitor:
    def __init__(self, module, use_input=False):
        self.records = []
        self.use_input = use_input
        self.handle = module.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.records.append(inputs[0] if self.use_input else output)


def stdp_linear_single_step(fc, in_spike, out_spike, trace_pre, trace_post, tau_pre, tau_post):
    if trace_pre is None:
        trace_pre = 0.0
    if trace_post is None:
        trace_post = 0.0
    weight = fc.weight.data
    trace_pre = trace_pre - trace_pre / tau_pre + in_spike
    trace_post = trace_post - trace_post / tau_post + out_spike
    delta_w_pre = -weight * (trace_post.unsqueeze(2) * in_spike.unsqueeze(1)).sum(0)
    delta_w_post = weight * (trace_pre.unsqueeze(1) * out_spike.unsqueeze(2)).sum(0)
    return trace_pre, trace_post, delta_w_pre + delta_w_post


class STDPLearner:
    def __init__(self, synapse, sn, tau_pre, tau_post):
        self.synapse, self.tau_pre, self.tau_post = synapse, tau_pre, tau_post
        self.in_spike_monitor = OutputMonitor(synapse, use_input=True)
        self.out_spike_monitor = OutputMonitor(sn)
        self.trace_pre = None
        self.trace_post = None

    @torch.no_grad()
    def step(self, on_grad=True, scale=1.0):
        delta_w = None
        for _ in range(len(self.in_spike_monitor.records)):
            in_spike = self.in_spike_monitor.records.pop(0)
            out_spike = self.out_spike_monitor.records.pop(0)
            self.trace_pre, self.trace_post, dw = stdp_linear_single_step(
                self.synapse, in_spike, out_spike, self.trace_pre, self.trace_post,
                self.tau_pre, self.tau_post)
            if scale != 1.0:
                dw *= scale
            delta_w = dw if delta_w is None else delta_w + dw
        if on_grad:
            if self.synapse.weight.grad is None:
                self.synapse.weight.grad = -delta_w
            else:
                self.synapse.weight.grad = self.synapse.weight.grad - delta_w
        else:
            return delta_w


def train_model_stdp(net, loader, T, lr, device):
    learners = [STDPLearner(net[i], net[i + 1], tau_pre=2.0, tau_post=2.0)
                for i in range(0, len(net), 2) if isinstance(net[i], nn.Linear)]
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.0)
    for x, _ in loader:
        x = x.to(device).flatten(1)
        optimizer.zero_grad()
        for t in range(T):
            net(x)
        for learner in learners:
            learner.step(on_grad=True)
        optimizer.step()
        for m in net.modules():
            if hasattr(m, "reset"):
                m.reset()
    return net
