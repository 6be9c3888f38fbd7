# Source: https://github.com/fangwei123456/spikingjelly/pull/705
# Report: reward-modulated STDP learner: a graph-connected reward from a critic flows into dw = reward * trace_e, which step() writes into weight.grad and chains via weight.grad - delta_w each step; tensors grow linearly
# Shape: the learner's step(reward) rebinds self.synapse.weight.grad from its own previous value plus a reward-scaled eligibility term; reward comes straight from critic(out_spike) in the rollout loop
# Expect: TML005 line 53
import torch
import torch.nn as nn


def mstdpet_trace_update(synapse, in_spike, out_spike, trace_pre, trace_post, trace_e,
                         tau_pre, tau_post, tau_trace):
    if trace_pre is None:
        trace_pre = torch.zeros_like(in_spike)
        trace_post = torch.zeros_like(out_spike)
        trace_e = torch.zeros_like(synapse.weight)
    trace_pre = trace_pre - trace_pre / tau_pre + in_spike
    trace_post = trace_post - trace_post / tau_post + out_spike
    eligibility = (trace_post.unsqueeze(2) * in_spike.unsqueeze(1)
                   - out_spike.unsqueeze(2) * trace_pre.unsqueeze(1)).mean(0)
    trace_e = trace_e - trace_e / tau_trace + eligibility
    return trace_pre, trace_post, trace_e


class MSTDPETLearner:
    def __init__(self, synapse: nn.Linear, tau_pre=2.0, tau_post=2.0, tau_trace=25.0):
        self.synapse = synapse
        self.tau_pre, self.tau_post, self.tau_trace = tau_pre, tau_post, tau_trace
        self.in_records, self.out_records = [], []
        self.trace_pre = self.trace_post = self.trace_e = None

    def record(self, in_spike, out_spike):
        self.in_records.append(in_spike.detach())
        self.out_records.append(out_spike.detach())

    def reset(self):
        self.in_records.clear()
        self.out_records.clear()
        self.trace_pre = self.trace_post = self.trace_e = None

    def step(self, reward, on_grad=True, scale=1.0):
        delta_w = None
        while self.in_records:
            in_spike = self.in_records.pop(0)
            out_spike = self.out_records.pop(0)
            self.trace_pre, self.trace_post, self.trace_e = mstdpet_trace_update(
                self.synapse, in_spike, out_spike, self.trace_pre, self.trace_post,
                self.trace_e, self.tau_pre, self.tau_post, self.tau_trace)
            dw = reward * self.trace_e
            delta_w = dw if delta_w is None else delta_w + dw
        if on_grad and delta_w is not None:
            if self.synapse.weight.grad is None:
                self.synapse.weight.grad = -scale * delta_w
            else:
                self.synapse.weight.grad = self.synapse.weight.grad - scale * delta_w  # expect: TML005
        return delta_w


def run_episode(fc, critic, learner, optimizer, observations):
    optimizer.zero_grad()
    learner.reset()
    for obs in observations:
        in_spike = (obs > torch.rand_like(obs)).float()
        out_spike = (fc(in_spike) > 0.5).float()
        learner.record(in_spike, out_spike)
        reward = critic(out_spike).mean()
        learner.step(reward, on_grad=True)
    optimizer.step()
    learner.reset()
