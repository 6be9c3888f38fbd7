# Modelled on: https://github.com/pytorch/pytorch/issues/46386
# Report: near-miss: Grad-CAM registers its hooks per image but removes both handles before returning.
import torch


def grad_cam(model, layer, image, class_idx):
    store = {}
    h_fwd = layer.register_forward_hook(lambda m, i, o: store.__setitem__("act", o))
    h_bwd = layer.register_full_backward_hook(lambda m, gi, go: store.__setitem__("grad", go[0]))
    score = model(image)[0, class_idx]
    model.zero_grad()
    score.backward()
    h_fwd.remove()
    h_bwd.remove()
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)
    return torch.relu((weights * store["act"]).sum(1)).detach()


def explain_all(model, layer, images, labels):
    return [grad_cam(model, layer, img[None], int(lbl)) for img, lbl in zip(images, labels)]
