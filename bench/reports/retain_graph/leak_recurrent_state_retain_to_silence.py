# Source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795
# Report: a small recurrent model whose hidden state is updated in forward raised "backward through the graph a second time" on the second step; retain_graph=True makes the error go away, not the cause.
# Shape: the state is kept on self between calls and never detached, which forces retain_graph=True on every step: the graph chain (and each backward's work) grows with each step.
# Expect: TML006 line 24; TML005 line 17
import torch
import torch.nn as nn


class LeakyIntegrator(nn.Module):
    def __init__(self, decay=0.9):
        super().__init__()
        self.decay = decay
        self.proj = nn.Linear(1, 1)
        self.state = torch.zeros(1)

    def forward(self, x):
        self.state = self.decay * self.state + self.proj(x)  # expect: TML005
        return self.state

    def train_it(self, x, y, optimizer):
        prediction = self(x)
        loss = (prediction - y).pow(2).sum()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
        return loss.item()


model = LeakyIntegrator()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for t in range(10000):
    model.train_it(torch.randn(1), torch.randn(1), optimizer)
