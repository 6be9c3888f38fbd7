# Source: https://stackoverflow.com/questions/46774641/what-does-the-parameter-retain-graph-mean-in-the-variables-backward-method/47174709
# Report: the answer explains retain_graph with two outputs d and e of one graph: d.backward(retain_graph=True) so that e.backward() can run; the last backward frees the graph.
# Shape: two losses of one graph each step; only the first backward retains, nothing graph-carrying outlives the step.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn

encoder = nn.Linear(16, 32)
head_a, head_b = nn.Linear(32, 1), nn.Linear(32, 1)
params = list(encoder.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
optimizer = torch.optim.SGD(params, lr=0.01)
epoch_log = []
for step in range(1000):
    x, ya, yb = torch.randn(8, 16), torch.randn(8, 1), torch.randn(8, 1)
    shared = torch.relu(encoder(x))
    loss_a = nn.functional.mse_loss(head_a(shared), ya)
    loss_b = nn.functional.mse_loss(head_b(shared), yb)
    optimizer.zero_grad()
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    optimizer.step()
    epoch_log.append((loss_a.item(), loss_b.item()))
