# Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# Report: calling the line-search optimizer while training a Lyapunov function leaked memory; the fix: the closure should return only the loss, and the losses list should only store the float value, not the tensor.
# Shape: a factory builds the closure handed to the optimizer (called several times per step); the closure appends each loss to a list the training function passes in and keeps.
# Expect: TML001 line 19
import torch
import torch.nn as nn


def lyapunov_loss(net, states, next_states, eps=0.01):
    v, v_next = net(states), net(next_states)
    return torch.relu(v_next - v + eps * states.norm(dim=1, keepdim=True)).mean() + torch.relu(-v).mean()


def make_closure(optimizer, net, states, next_states, losses):
    def closure():
        optimizer.zero_grad()
        loss = lyapunov_loss(net, states, next_states)
        loss.backward()
        losses.append(loss)  # expect: TML001
        return loss

    return closure


def train_lyapunov(net, sampler, iterations=1000):
    optimizer = torch.optim.LBFGS(net.parameters(), lr=0.1, line_search_fn="strong_wolfe")
    losses = []
    for it in range(iterations):
        states, next_states = sampler()
        optimizer.step(make_closure(optimizer, net, states, next_states, losses))
    return losses
