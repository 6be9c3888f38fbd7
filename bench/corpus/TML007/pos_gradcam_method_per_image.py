# Modelled on: https://github.com/pytorch/pytorch/issues/46386
# Report: GPU memory was not released because of forward hooks holding references; each call here registers fresh hooks on the same model.
import torch


class GradCam:
    def __init__(self, model, target_layer):
        self.model = model
        self.target_layer = target_layer
        self.activations = None
        self.gradients = None

    def generate(self, image, class_idx):
        def save_act(module, inp, out):
            self.activations = out

        def save_grad(module, grad_in, grad_out):
            self.gradients = grad_out[0]

        self.target_layer.register_forward_hook(save_act)  # expect: TML007
        self.target_layer.register_full_backward_hook(save_grad)  # expect: TML007
        score = self.model(image)[0, class_idx]
        self.model.zero_grad()
        score.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(1)).detach()


def explain_all(model, layer, images, labels):
    cam = GradCam(model, layer)
    return [cam.generate(img[None], int(lbl)) for img, lbl in zip(images, labels)]
