# Modelled on: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
# Report: "If you don't intend for the operation to be differentiable, you can use torch.no_grad".
import torch

x = torch.randn(200, 3)
y = x @ torch.tensor([2.0, -1.0, 0.5]) + 0.3
w = torch.zeros(3, requires_grad=True)
lr = 0.05

for epoch in range(100):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
