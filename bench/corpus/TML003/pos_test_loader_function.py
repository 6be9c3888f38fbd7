# Modelled on: https://github.com/pytorch/pytorch/issues/4932
# Report: in the validation phase of the ImageNet example the GPU used more and more memory (volatile=True had stopped working; no_grad was needed).
import torch


def test(model, test_loader, device):
    correct = 0
    for data, target in test_loader:
        data, target = data.to(device), target.to(device)
        output = model(data)  # expect: TML003
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
    return correct / len(test_loader.dataset)
