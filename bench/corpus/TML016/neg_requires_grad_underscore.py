# Modelled on: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
# Report: Module.requires_grad_(False) sets requires_grad on every parameter of the module.
import torch
import torchvision

model = torchvision.models.resnet18(weights="DEFAULT")
model.requires_grad_(False)
model.fc = torch.nn.Linear(model.fc.in_features, 10)
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01)
