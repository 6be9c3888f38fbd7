# Source: https://github.com/kazuto1011/grad-cam-pytorch/issues/36
# Report: running Grad-CAM over a large dataset on GPU piles up memory batch after batch until CUDA OOM; users fixed it by tearing the wrapper (and its hooks) down after every batch
# Shape: same per-batch wrapper, but the batch body runs in try/finally and calls gcam.remove_hook(), which removes every handle the constructor registered
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class GradCAM:
    def __init__(self, model, candidate_layers):
        self.model = model
        self.handlers = []
        self.fmap_pool = {}
        self.grad_pool = {}

        def save_fmaps(key):
            def forward_hook(module, inputs, output):
                self.fmap_pool[key] = output.detach()
            return forward_hook

        def save_grads(key):
            def backward_hook(module, grad_in, grad_out):
                self.grad_pool[key] = grad_out[0].detach()
            return backward_hook

        for name, module in self.model.named_modules():
            if name in candidate_layers:
                self.handlers.append(module.register_forward_hook(save_fmaps(name)))
                self.handlers.append(module.register_full_backward_hook(save_grads(name)))

    def forward(self, image):
        self.image = image
        self.logits = self.model(image)
        self.probs = F.softmax(self.logits, dim=1)
        return self.probs.sort(dim=1, descending=True)

    def backward(self, ids):
        one_hot = torch.zeros_like(self.logits).scatter_(1, ids, 1.0)
        self.model.zero_grad()
        self.logits.backward(gradient=one_hot)

    def remove_hook(self):
        for handle in self.handlers:
            handle.remove()
        self.handlers.clear()

    def generate(self, target_layer):
        fmaps = self.fmap_pool[target_layer]
        weights = F.adaptive_avg_pool2d(self.grad_pool[target_layer], 1)
        gcam = F.relu((fmaps * weights).sum(dim=1, keepdim=True))
        gcam = F.interpolate(gcam, self.image.shape[2:], mode="bilinear", align_corners=False)
        flat = gcam.flatten(1)
        flat = (flat - flat.min(dim=1, keepdim=True).values) / flat.max(dim=1, keepdim=True).values
        return flat.view_as(gcam)


def explain_dataset(model, loader, target_layer, device, save_fn):
    model.eval()
    for batch_idx, (images, _) in enumerate(loader):
        images = images.to(device)
        gcam = GradCAM(model=model, candidate_layers=[target_layer])
        try:
            _, ids = gcam.forward(images)
            gcam.backward(ids=ids[:, [0]])
            regions = gcam.generate(target_layer=target_layer)
            save_fn(batch_idx, regions.cpu().numpy())
        finally:
            gcam.remove_hook()
