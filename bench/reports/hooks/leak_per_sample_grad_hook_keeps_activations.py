# Source: https://github.com/meta-pytorch/opacus/issues/176
# Report: evaluating under torch.no_grad() while the model was still in training mode leaked memory: the per-sample-gradient forward hook kept saving activations that no backward ever consumed.
# Shape: a helper registers, once, a forward hook on every trainable layer that appends the layer input to a list on the module; evaluation runs without calling model.eval(), so each batch adds to the lists.
# Expect: TML004 line 12
import torch
import torch.nn as nn


def capture_activations(module, inputs, output):
    if not hasattr(module, "activations"):
        module.activations = []
    module.activations.append(inputs[0].detach())  # expect: TML004


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
