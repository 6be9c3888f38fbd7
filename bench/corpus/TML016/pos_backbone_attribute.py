# Modelled on: https://github.com/catalyst-team/catalyst/pull/81
# Report: "Fix freeze": the parameters had to be looped over to set requires_grad=False; setting it on the module left the model trainable.
import torch
import torchvision

model = torchvision.models.resnet18(weights="DEFAULT")
model.requires_grad = False  # expect: TML016
model.fc = torch.nn.Linear(model.fc.in_features, 10)
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01)
