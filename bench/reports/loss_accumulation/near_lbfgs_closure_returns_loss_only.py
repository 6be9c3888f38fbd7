# Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# Report: after the fix the closure returns only the loss and the training function keeps loss.item() per iteration.
# Shape: same closure factory; the closure only returns the loss, and the value returned by optimizer.step(closure) is stored as a float.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def lyapunov_loss(net, states, next_states, eps=0.01):
    v, v_next = net(states), net(next_states)
    return torch.relu(v_next - v + eps * states.norm(dim=1, keepdim=True)).mean() + torch.relu(-v).mean()


def make_closure(optimizer, net, states, next_states):
    def closure():
        optimizer.zero_grad()
        loss = lyapunov_loss(net, states, next_states)
        loss.backward()
        return loss

    return closure


def train_lyapunov(net, sampler, iterations=1000):
    optimizer = torch.optim.LBFGS(net.parameters(), lr=0.1, line_search_fn="strong_wolfe")
    losses = []
    for it in range(iterations):
        states, next_states = sampler()
        losses.append(optimizer.step(make_closure(optimizer, net, states, next_states)).item())
    return losses
