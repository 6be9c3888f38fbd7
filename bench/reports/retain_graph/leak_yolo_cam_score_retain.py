# Source: https://github.com/pooya-mohammadi/yolov5-gradcam/issues/27
# Report: running the CAM on CUDA over a bunch of images leaked GPU memory; the cause was score.backward(retain_graph=True).
# Shape: the backward that retains is the last (and only) one of each image's iteration; the detections it came from are kept for drawing.
# Expect: TML006 line 21; TML001 line 31
import torch


class YOLOCAM:
    def __init__(self, model, layer):
        self.model = model
        self.activation = None
        self.gradient = None
        layer.register_forward_hook(lambda m, i, o: setattr(self, "activation", o))
        layer.register_full_backward_hook(lambda m, gi, go: setattr(self, "gradient", go[0]))

    def __call__(self, image):
        detections = self.model(image)
        maps = []
        for score in detections[:, 4]:
            self.model.zero_grad()
            score.backward(retain_graph=True)  # expect: TML006
            weights = self.gradient.mean(dim=(2, 3), keepdim=True)
            maps.append(torch.relu((weights * self.activation).sum(dim=1)).detach())
        return maps, detections


def run_folder(cam, images):
    results = []
    for image in images:
        maps, detections = cam(image.cuda())
        results.append((maps, detections))  # expect: TML001
    return results
