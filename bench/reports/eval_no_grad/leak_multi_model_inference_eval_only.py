# Source: https://blog.csdn.net/qq_61888524/article/details/120814456
# Report: inference with trained models filled all GPU memory (CUDA OOM): the models were put in eval() but forward still built autograd graphs; no_grad fixed it
# Shape: an inference wrapper holding several eval()-mode models; infer() stacks their outputs with grad mode still on
# Expect: TML003 line 33
import torch
import torch.nn as nn
import torch.nn.functional as F


def build_segmenter(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(64, num_classes, 1),
    )


class EnsemblePredictor:
    def __init__(self, ckpt_paths, num_classes=21, devices=("cuda:0", "cuda:1", "cuda:2")):
        self.models = []
        self.devices = list(devices)
        for path, dev in zip(ckpt_paths, self.devices):
            net = build_segmenter(num_classes)
            net.load_state_dict(torch.load(path, map_location="cpu"))
            net.to(dev)
            net.eval()
            self.models.append(net)
        self.out_device = self.devices[0]

    def infer(self, image):
        # model.eval() only switches dropout/BN; graphs are still recorded here
        pairs = zip(self.models, self.devices)
        probs = torch.stack([F.softmax(net(image.to(dev)), dim=1).to(self.out_device) for net, dev in pairs])  # expect: TML003
        return probs.mean(0).argmax(1)


def run_folder(predictor, loader):
    masks = []
    for image, name in loader:
        mask = predictor.infer(image)
        masks.append((name, mask.cpu().numpy()))
    return masks
