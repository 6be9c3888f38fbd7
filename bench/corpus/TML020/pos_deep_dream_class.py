# Modelled on: https://github.com/jonasrauber/eagerpy/pull/55
# Report: computing gradients with respect to the input through backward also stored gradients in the model, an issue for adversarial training.
import torch


class DeepDream:
    def __init__(self, model, layer_index, lr=0.05):
        self.model = model.eval()
        self.layer_index = layer_index
        self.lr = lr

    def dream(self, image, steps=20):
        img = image.clone().requires_grad_(True)
        for _ in range(steps):
            x = img
            for i, layer in enumerate(self.model.features):
                x = layer(x)
                if i == self.layer_index:
                    break
            loss = -x.norm()
            loss.backward()  # expect: TML020
            with torch.no_grad():
                img -= self.lr * img.grad / img.grad.abs().mean()
                img.grad.zero_()
        return img.detach()
