# Source: https://github.com/Kaixhin/Rainbow/pull/33
# Report: prioritized replay memory kept PyTorch tensors in its sum tree (3x memory, 2-3x slower); the fix stores numpy values instead
# Shape: the fix: per-sample losses are turned into a numpy array before update_priorities, so the tree holds plain floats
# Expect: near-miss: must be silent
import numpy as np
import torch


class SegmentTree:
    def __init__(self, size):
        self.index = 0
        self.size = size
        self.sum_tree = [0] * (2 * size - 1)
        self.data = [None] * size
        self.max = 1

    def _propagate(self, index):
        parent = (index - 1) // 2
        left, right = 2 * parent + 1, 2 * parent + 2
        self.sum_tree[parent] = self.sum_tree[left] + self.sum_tree[right]
        if parent != 0:
            self._propagate(parent)

    def update(self, index, value):
        self.sum_tree[index] = value
        self._propagate(index)
        self.max = max(value, self.max)


class ReplayMemory:
    def __init__(self, capacity, priority_exponent):
        self.transitions = SegmentTree(capacity)
        self.priority_exponent = priority_exponent

    def update_priorities(self, idxs, priorities):
        priorities = np.power(priorities, self.priority_exponent)
        for idx, priority in zip(idxs, priorities):
            self.transitions.update(idx, priority)


class Agent:
    def __init__(self, online_net, optimiser):
        self.online_net = online_net
        self.optimiser = optimiser

    def learn(self, mem, batch_size):
        idxs, states, actions, m, weights = mem.sample(batch_size)
        log_p = self.online_net(states, log=True)
        log_p_a = log_p[range(batch_size), actions]
        loss = -torch.sum(m * log_p_a, 1)
        self.online_net.zero_grad()
        (weights * loss).mean().backward()
        self.optimiser.step()
        mem.update_priorities(idxs, loss.detach().cpu().numpy())
