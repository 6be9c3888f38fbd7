# Source: https://discuss.pytorch.org/t/how-computation-graph-in-pytorch-is-created-and-freed/3515/4
# Report: a user asked whether, with retain_graph=True in a 100-step loop, all 100 graphs stay in memory; each step's graph is freed once its output is rebound, since nothing keeps it.
# Shape: the only backward of the step retains, but no graph-carrying value outlives the iteration.
# Expect: near-miss: must be silent
import torch

for i in range(100):
    a = torch.randn(2, 3, requires_grad=True)
    y = torch.sum(a * a)
    y.backward(retain_graph=True)
    print(i, a.grad.norm().item())
