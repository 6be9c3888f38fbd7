# Source: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# Report: a DenseNet bottleneck saved each batch's intermediate output into a class-level list to reuse later and ran CUDA out of memory; the user expected the list to live in main memory.
# Shape: forward writes its graph-carrying output into a list on the class, one slot per batch of the epoch.
# Expect: TML001 line 22
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Bottleneck(nn.Module):
    out_saved = [None] * 64

    def __init__(self, channels, growth):
        super().__init__()
        self.conv = nn.Conv2d(channels, growth, 3, padding=1)
        self.counter = 0

    def forward(self, x):
        out = torch.cat((x, self.conv(torch.relu(x))), 1)
        Bottleneck.out_saved[self.counter] = out  # expect: TML001
        self.counter += 1
        return out


model = nn.Sequential(Bottleneck(4, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in range(24):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 4, 8, 8, device=device)), torch.randint(0, 10, (8,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(sum(o is not None for o in Bottleneck.out_saved))
