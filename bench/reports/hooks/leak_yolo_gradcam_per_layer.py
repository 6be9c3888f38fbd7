# Source: https://github.com/pooya-mohammadi/yolov5-gradcam/issues/34
# Report: looping YOLOv5 Grad-CAM over many images and, per image, over several target layers makes memory grow on every model forward
# Shape: a new GradCAM object is built per (image, layer); its __init__ registers forward/backward hooks on the shared detector's layer and never removes them, each hook keeping its own activation/gradient dict
# Expect: TML007 line 33; TML007 line 34; TML006 line 42
import os

import cv2
import torch
import torch.nn.functional as F


def find_yolo_layer(model, layer_name):
    hierarchy = layer_name.split("_")
    target = model.model._modules[hierarchy[0]]
    for h in hierarchy[1:]:
        target = target._modules[h]
    return target


class YOLOV5GradCAM:
    def __init__(self, model, layer_name, img_size=(640, 640)):
        self.model = model
        self.gradients = dict()
        self.activations = dict()

        def backward_hook(module, grad_input, grad_output):
            self.gradients["value"] = grad_output[0]

        def forward_hook(module, input, output):
            self.activations["value"] = output

        target_layer = find_yolo_layer(self.model, layer_name)
        target_layer.register_forward_hook(forward_hook)  # expect: TML007
        target_layer.register_backward_hook(backward_hook)  # expect: TML007

    def __call__(self, input_img):
        _, _, h, w = input_img.size()
        preds, logits = self.model(input_img)
        maps = []
        for logit, cls in zip(logits[0], preds[1][0]):
            self.model.zero_grad()
            logit[cls].backward(retain_graph=True)  # expect: TML006
            grads, acts = self.gradients["value"], self.activations["value"]
            b, k, _, _ = grads.size()
            weights = grads.view(b, k, -1).mean(2).view(b, k, 1, 1)
            sal = F.relu((weights * acts).sum(1, keepdim=True))
            sal = F.interpolate(sal, size=(h, w), mode="bilinear", align_corners=False)
            maps.append(((sal - sal.min()) / (sal.max() - sal.min())).detach().cpu())
        return maps, preds


def folder_main(model, folder, layers, out_dir, img_size=(640, 640)):
    os.makedirs(out_dir, exist_ok=True)
    for item in sorted(os.listdir(folder)):
        img = cv2.imread(os.path.join(folder, item))
        torch_img = model.preprocessing(img[..., ::-1])
        for layer in layers:
            cam = YOLOV5GradCAM(model=model, layer_name=layer, img_size=img_size)
            masks, _ = cam(torch_img)
            torch.save(masks, os.path.join(out_dir, f"{item}.{layer}.pt"))
