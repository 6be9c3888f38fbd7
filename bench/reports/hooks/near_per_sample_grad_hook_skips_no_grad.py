# Source: https://github.com/meta-pytorch/opacus/issues/176
# Report: the maintainers' fix makes the hook store nothing when the module is not training or grad mode is off.
# Shape: same hook helper and evaluation loop without model.eval(); the hook returns early under no_grad, and the training step's backward consumes and clears what it stored.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def capture_activations(module, inputs, output):
    if not module.training or not torch.is_grad_enabled():
        return
    if not hasattr(module, "activations"):
        module.activations = []
    module.activations.append(inputs[0].detach())


def add_grad_sample_hooks(model):
    handles = []
    for layer in model.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            handles.append(layer.register_forward_hook(capture_activations))
    return handles


def evaluate(model, loader, device):
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.to(device))
            correct += (logits.argmax(-1) == labels.to(device)).sum().item()
    return correct / len(loader.dataset)


def train_and_evaluate(model, train_step, train_loader, test_loader, device, epochs):
    add_grad_sample_hooks(model)
    for epoch in range(epochs):
        for images, labels in train_loader:
            train_step(model, images.to(device), labels.to(device))
        print(epoch, evaluate(model, test_loader, device))
