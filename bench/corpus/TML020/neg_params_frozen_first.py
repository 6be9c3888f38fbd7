# Modelled on: https://github.com/BorealisAI/advertorch/issues/113
# Report: "there is ctx_noparamgrad_and_eval": parameters stop requiring grad during the attack, so backward only fills the input gradient.
import torch
import torchvision

model = torchvision.models.vgg16(weights="DEFAULT").eval()
model.requires_grad_(False)


def saliency(image):
    x = image.unsqueeze(0).requires_grad_(True)
    score, _ = torch.max(model(x), 1)
    score.backward()
    slc, _ = torch.max(torch.abs(x.grad[0]), dim=0)
    return slc
