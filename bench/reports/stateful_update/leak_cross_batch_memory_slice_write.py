# Source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/54
# Report: the cross-batch memory of a metric-learning loss writes each batch's embeddings into a ring buffer kept on the loss object (the library detaches them before writing).
# Shape: rewrite without the detach: the buffer is read only under no_grad for mining, but the slice assignment records CopySlices, so the buffer keeps a history that links every batch written into it.
# Expect: TML005 line 21
import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossBatchMemoryLoss(nn.Module):
    def __init__(self, dim, memory_size=1024, margin=0.2):
        super().__init__()
        self.memory_size = memory_size
        self.margin = margin
        self.register_buffer("embedding_memory", torch.zeros(memory_size, dim))
        self.register_buffer("label_memory", torch.zeros(memory_size, dtype=torch.long))
        self.queue_idx = 0

    def _enqueue(self, embeddings, labels):
        end = self.queue_idx + embeddings.shape[0]
        self.embedding_memory[self.queue_idx:end] = embeddings  # expect: TML005
        self.label_memory[self.queue_idx:end] = labels
        self.queue_idx = end % self.memory_size

    def forward(self, embeddings, labels):
        with torch.no_grad():
            other = labels[:, None] != self.label_memory[None, :]
            hardest = ((embeddings @ self.embedding_memory.t()) * other).max(dim=1).values
        positives = (embeddings * embeddings.roll(1, dims=0)).sum(dim=1)
        loss = F.relu(hardest - positives + self.margin).mean()
        self._enqueue(embeddings, labels)
        return loss


encoder = nn.Linear(128, 64)
criterion = CrossBatchMemoryLoss(64)
opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
for step in range(2000):
    x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
    loss = criterion(F.normalize(encoder(x), dim=1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
