# Modelled on: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
# Report: "a leaf Variable that requires grad is being used in an in-place operation" from a hand-written update of a parameter.
import torch

features = torch.randn(512, 8)
labels = (features[:, 0] - features[:, 3] > 0).float()
weights = torch.zeros(8, requires_grad=True)
offset = torch.zeros((), requires_grad=True)
step_size = 0.5

for sweep in range(20):
    for start in range(0, 512, 64):
        xb, yb = features[start:start + 64], labels[start:start + 64]
        prob = torch.sigmoid(xb @ weights + offset)
        nll = torch.nn.functional.binary_cross_entropy(prob, yb)
        nll.backward()
        weights.sub_(step_size * weights.grad)  # expect: TML015
        offset.sub_(step_size * offset.grad)  # expect: TML015
        weights.grad = None
        offset.grad = None
