# Source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/54
# Report: the cross-batch memory of a metric-learning loss writes each batch's embeddings into a ring buffer kept on the loss object (the library detaches them first).
# Shape: rewrite without the detach: the slice assignment records CopySlices, so the buffer keeps a history linking every batch written into it.
# Expect: TML005 line 19
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class CrossBatchMemory:
    def __init__(self, size=256, dim=16):
        self.embeddings = torch.zeros(size, dim, device=device)
        self.size, self.head = size, 0

    def add(self, embeddings):
        end = self.head + len(embeddings)
        self.embeddings[self.head:end] = embeddings  # expect: TML005
        self.head = end % self.size

    def loss(self, embeddings):
        with torch.no_grad():
            hardest = (embeddings @ self.embeddings.T).argmax(dim=1)
        return (embeddings - self.embeddings[hardest].detach()).pow(2).sum(1).mean()


encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16)).to(device)
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
memory = CrossBatchMemory()
for step in range(24):
    embeddings = encoder(torch.randn(32, 32, device=device))
    loss = memory.loss(embeddings)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    memory.add(embeddings)
print(memory.embeddings.norm().item())
