# Source: https://github.com/pytorch/pytorch/issues/4661
# Report: a user captured gradients with a hook at the embedding layer and stored them in a list while training; GPU memory leaked step after step.
# Shape: a helper installs a gradient hook on the embedding weight that appends the gradient to a module-level list; the training loop calls the helper every batch.
# Expect: TML007 line 17
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
embedding = nn.Embedding(100, 16).to(device)
head = nn.Linear(16, 2).to(device)
optimizer = torch.optim.SGD(list(embedding.parameters()) + list(head.parameters()), lr=0.1)
captured = []


def capture_gradients():
    embedding.weight.register_hook(lambda grad: captured.append(grad.norm()))  # expect: TML007


for step in range(24):
    capture_gradients()
    tokens = torch.randint(0, 100, (8, 12), device=device)
    loss = nn.functional.cross_entropy(head(embedding(tokens).mean(1)), torch.randint(0, 2, (8,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(len(captured))
