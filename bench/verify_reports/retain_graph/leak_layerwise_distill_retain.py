# Source: https://github.com/pytorch/pytorch/issues/40005
# Report: training intermediate layers of a student independently, one KL loss per layer with backward(retain_graph=True), ran out of memory.
# Shape: every per-layer backward retains, the last one of the step included, and the per-layer losses are kept for the epoch log.
# Expect: TML006 line 21; TML001 line 22
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
student = nn.ModuleList([nn.Linear(32, 32) for _ in range(3)]).to(device)
teacher = nn.ModuleList([nn.Linear(32, 32) for _ in range(3)]).to(device).requires_grad_(False)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
layer_losses = []
for step in range(24):
    x = torch.randn(16, 32, device=device)
    s, t = x, x
    optimizer.zero_grad()
    for s_layer, t_layer in zip(student, teacher):
        s, t = torch.tanh(s_layer(s)), torch.tanh(t_layer(t))
        kl = nn.functional.kl_div(s.log_softmax(-1), t.softmax(-1), reduction="batchmean")
        kl.backward(retain_graph=True)  # expect: TML006
        layer_losses.append(kl)  # expect: TML001
    optimizer.step()
print(len(layer_losses))
