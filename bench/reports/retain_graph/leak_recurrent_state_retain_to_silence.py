# Source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795
# Report: a one-node recurrent model whose hidden state is updated in forward raised "backward through the graph a second time" on the second step; retain_graph=True makes the error go away, not the cause.
# Shape: the state is kept on self between calls and never detached, which forces retain_graph=True on every step: the graph chain grows with each step.
# Expect: TML006 line 24; TML005 line 17
import torch
import torch.nn as nn


class OneNodeRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_in = nn.Parameter(torch.randn(1))
        self.w_rec = nn.Parameter(torch.randn(1))
        self.state = torch.zeros(1)

    def forward(self, x):
        self.state = torch.tanh(self.w_in * x + self.w_rec * self.state)  # expect: TML005
        return self.state

    def train_it(self, x, y, optimizer):
        prediction = self(x)
        loss = (prediction - y).pow(2).sum()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
        return loss.item()


model = OneNodeRNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for t in range(10000):
    model.train_it(torch.randn(1), torch.randn(1), optimizer)
