# Modelled on: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
# Report: "a leaf Variable that requires grad is being used in an in-place operation" from a hand-written update of a parameter.
import torch

x = torch.randn(200, 3)
y = x @ torch.tensor([2.0, -1.0, 0.5]) + 0.3
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.05

for epoch in range(100):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad  # expect: TML015
    b -= lr * b.grad  # expect: TML015
    w.grad.zero_()
    b.grad.zero_()
