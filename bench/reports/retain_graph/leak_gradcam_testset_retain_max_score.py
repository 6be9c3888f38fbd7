# Source: https://github.com/HwanWoongLee/Pytorch_ImageClassification/blob/18fd9d8de6a22192208d28cc642fa714dfc48921/scripts/main.py
# Report: audit of a ResNet image-classification script that renders Grad-CAM for every test image: the only backward of each iteration is torch.max(score).backward(retain_graph=True), while the wrapper keeps the attached conv5 feature map on self and the loop keeps output, so each image's whole retained graph is still alive when the next image's forward runs
# Shape: nn.Module wrapper registers forward/backward hooks once and stores squeezed activations / gradients on self; the test loop (batch_size=1) backprops the top score with retain_graph=True, builds the CAM, saves a figure and counts accuracy
# Expect: TML006 line 54
import cv2 as cv
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
from torchvision import transforms


class QGradCAM(nn.Module):
    def __init__(self, model, target_layer="conv5_x"):
        super().__init__()
        self.model = model
        self.forward_result = None
        self.backward_result = None
        layer = dict(model.named_modules())[target_layer]
        layer.register_forward_hook(self.forward_hook)
        layer.register_full_backward_hook(self.backward_hook)

    def forward(self, x):
        return self.model(x)

    def forward_hook(self, module, inputs, output):
        self.forward_result = torch.squeeze(output)

    def backward_hook(self, module, grad_input, grad_output):
        self.backward_result = torch.squeeze(grad_output[0])


def to_gray_image(x):
    image_np = np.transpose(torch.squeeze(x[0]).cpu().numpy(), (1, 2, 0))
    image_np = cv.normalize(image_np, None, 0, 255, cv.NORM_MINMAX, cv.CV_8UC1)
    return transforms.ToPILImage()(cv.cvtColor(image_np, cv.COLOR_BGR2GRAY))


def cam_to_image(cam, size=224):
    s_np = cv.resize(cam.detach().numpy(), dsize=(size, size), interpolation=cv.INTER_CUBIC)
    s_np = cv.normalize(s_np, None, 0, 255, cv.NORM_MINMAX, cv.CV_8UC1)
    return transforms.ToPILImage()(s_np)


def render_test_set(model_path, test_dataloader, out_dir="../result_image"):
    load_model = torch.load(model_path, map_location="cuda")
    load_model.eval()
    gc_model = QGradCAM(load_model).eval()
    total_num, correct_num = 0, 0
    for findex, (data, label) in enumerate(test_dataloader):
        data, label = data.cuda(), label.cuda()
        output = gc_model(data)
        score = torch.squeeze(output)
        torch.max(score).backward(retain_graph=True)  # expect: TML006

        a_k = torch.mean(gc_model.backward_result, dim=(1, 2), keepdim=True)
        cam = torch.relu(torch.sum(a_k * gc_model.forward_result, dim=0)).cpu()

        fig = plt.figure()
        ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        image_pil = to_gray_image(data)
        ax1.imshow(image_pil, cmap="gray")
        ax2.imshow(image_pil, cmap="gray", alpha=1.0)
        ax2.imshow(cam_to_image(cam), cmap="jet", alpha=0.5)
        plt.savefig(f"{out_dir}/{findex}.png")
        plt.close(fig)

        _, predict = torch.max(output.data, 1)
        total_num += label.size(0)
        correct_num += (predict == label).sum().item()
    print("Accuracy of Test Data : {:.2f} %".format(100 * correct_num / total_num))
