# Modelled on: https://github.com/sunnynevarekar/pytorch-saliency-maps/issues/1
# Report: a saliency notebook calls score.backward() only to read input.grad afterwards.
import torch
import torchvision

model = torchvision.models.vgg16(weights="DEFAULT").eval()


def saliency(image):
    x = image.unsqueeze(0).requires_grad_(True)
    preds = model(x)
    score, _ = torch.max(preds, 1)
    score.backward()  # expect: TML020
    slc, _ = torch.max(torch.abs(x.grad[0]), dim=0)
    return (slc - slc.min()) / (slc.max() - slc.min())
