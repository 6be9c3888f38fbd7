# Modelled on: https://github.com/pytorch/pytorch/issues/7415
# Report: memory surged to about double when loading an already trained model; the suggested fix loads to CPU first.
import torch as T
import torchvision

net = torchvision.models.resnet50()
net.load_state_dict(T.load("resnet50_finetuned.pth"))  # expect: TML011
net = net.cuda().eval()
