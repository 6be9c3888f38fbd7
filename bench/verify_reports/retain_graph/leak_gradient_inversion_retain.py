# Source: https://github.com/Koukyosyumei/AIJack/issues/133
# Report: a gradient-inversion attack ran out of GPU memory; retain_graph=True on the backward inside the reconstruction loop kept PyTorch from freeing memory.
# Shape: the only backward of each reconstruction step retains its graph; the distance it backpropagates comes from a helper, and every distance is kept for the log.
# Expect: TML006 line 27; TML001 line 29
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
victim = nn.Sequential(nn.Linear(32, 64), nn.Sigmoid(), nn.Linear(64, 4)).to(device)
target_grads = [torch.randn_like(p) for p in victim.parameters()]
dummy = torch.randn(1, 32, device=device, requires_grad=True)
dummy_label = torch.randn(1, 4, device=device, requires_grad=True)
optimizer = torch.optim.Adam([dummy, dummy_label], lr=0.05)


def gradient_distance():
    loss = torch.sum(-dummy_label.softmax(-1) * victim(dummy).log_softmax(-1))
    grads = torch.autograd.grad(loss, victim.parameters(), create_graph=True)
    return sum(((g - t) ** 2).sum() for g, t in zip(grads, target_grads))


history = []
for step in range(24):
    optimizer.zero_grad()
    distance = gradient_distance()
    distance.backward(retain_graph=True)  # expect: TML006
    optimizer.step()
    history.append(distance)  # expect: TML001
print(float(history[-1]))
