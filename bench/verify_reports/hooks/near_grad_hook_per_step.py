# Source: https://github.com/pytorch/pytorch/issues/4661
# Report: register the hook once, outside the loop.
# Shape: the helper is called once before training.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
embedding = nn.Embedding(100, 16).to(device)
head = nn.Linear(16, 2).to(device)
optimizer = torch.optim.SGD(list(embedding.parameters()) + list(head.parameters()), lr=0.1)
captured = []


def capture_gradients():
    embedding.weight.register_hook(lambda grad: captured.append(grad.norm()))


capture_gradients()
for step in range(24):
    tokens = torch.randint(0, 100, (8, 12), device=device)
    loss = nn.functional.cross_entropy(head(embedding(tokens).mean(1)), torch.randint(0, 2, (8,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(len(captured))
