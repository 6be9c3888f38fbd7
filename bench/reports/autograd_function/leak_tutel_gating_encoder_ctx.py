# Source: https://github.com/microsoft/Tutel/issues/237
# Report: Tutel fast_dispatch GatingEncoder/GatingDecoder kept their input tensors as plain ctx attributes; with gradient accumulation GPU memory grew with the number of accumulation steps (fixed in PR #238 with ctx.save_for_backward)
# Shape: reshaped_input / expert_output are stored on ctx inside a custom autograd.Function forward; the ctx is reachable from the output's grad_fn, so the tensors live as long as the graph (and in a cycle when the output is saved too)
# Expect: TML018 lines 25, 49
import torch
import torch.nn as nn
import torch.nn.functional as F


class DispatchConfig:
    def __init__(self, indices_, locations_, capacity, num_experts, model_dim):
        self.indices_ = indices_
        self.locations_ = locations_
        self.capacity = capacity
        self.num_experts = num_experts
        self.model_dim = model_dim

    def slots(self, k):
        return self.indices_[k] * self.capacity + self.locations_[k]


class GatingEncoder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, config, reshaped_input, *gates_):
        ctx.reshaped_input = reshaped_input  # expect: TML018
        ctx.config = config
        ctx.save_for_backward(*gates_)
        dispatched = reshaped_input.new_zeros(config.num_experts * config.capacity, config.model_dim)
        for k, g in enumerate(gates_):
            dispatched.index_add_(0, config.slots(k), reshaped_input * g.view(-1, 1))
        return dispatched

    @staticmethod
    def backward(ctx, grad_dispatched):
        gates_ = ctx.saved_tensors
        grad_dispatched = grad_dispatched.contiguous()
        grad_input, grad_gates = None, []
        for k, g in enumerate(gates_):
            picked = grad_dispatched[ctx.config.slots(k)]
            part = picked * g.view(-1, 1)
            grad_input = part if grad_input is None else grad_input + part
            grad_gates.append((picked * ctx.reshaped_input).sum(-1))
        return (None, grad_input, *grad_gates)


class GatingDecoder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, config, expert_output, *gates_):
        ctx.expert_output = expert_output  # expect: TML018
        ctx.config = config
        ctx.save_for_backward(*gates_)
        combined = None
        for k, g in enumerate(gates_):
            part = expert_output[config.slots(k)] * g.view(-1, 1)
            combined = part if combined is None else combined + part
        return combined

    @staticmethod
    def backward(ctx, grad_combined):
        gates_ = ctx.saved_tensors
        grad_expert = torch.zeros_like(ctx.expert_output)
        grad_gates = []
        for k, g in enumerate(gates_):
            grad_expert.index_add_(0, ctx.config.slots(k), grad_combined * g.view(-1, 1))
            grad_gates.append((grad_combined * ctx.expert_output[ctx.config.slots(k)]).sum(-1))
        return (None, grad_expert, *grad_gates)


class MoELayer(nn.Module):
    def __init__(self, model_dim, hidden, num_experts, top_k=2, capacity_factor=1.25):
        super().__init__()
        self.gate = nn.Linear(model_dim, num_experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(num_experts, model_dim, hidden) * 0.02)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, model_dim) * 0.02)
        self.num_experts, self.top_k, self.capacity_factor = num_experts, top_k, capacity_factor

    def forward(self, x):
        tokens = x.reshape(-1, x.size(-1))
        scores = F.softmax(self.gate(tokens), dim=-1)
        top_scores, top_idx = scores.topk(self.top_k, dim=-1)
        capacity = int(self.capacity_factor * tokens.size(0) * self.top_k / self.num_experts) + 1
        with torch.no_grad():
            locations = [(F.one_hot(top_idx[:, k], self.num_experts).cumsum(0) - 1).gather(1, top_idx[:, k:k + 1]).squeeze(1)
                         for k in range(self.top_k)]
            locations = [loc.clamp(max=capacity - 1) for loc in locations]
        config = DispatchConfig([top_idx[:, k] for k in range(self.top_k)], locations,
                                capacity, self.num_experts, tokens.size(-1))
        gates = [top_scores[:, k] for k in range(self.top_k)]
        dispatched = GatingEncoder.apply(config, tokens, *gates)
        h = dispatched.view(self.num_experts, capacity, -1)
        h = torch.bmm(F.gelu(torch.bmm(h, self.w1)), self.w2).reshape(-1, tokens.size(-1))
        return GatingDecoder.apply(config, h, *gates).view_as(x)


def train(model, loader, optimizer, accumulation_steps=8, device="cuda"):
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = F.mse_loss(model(x), y) / accumulation_steps
        loss.backward()
        if (step + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
