# Source: https://github.com/kazuto1011/grad-cam-pytorch/issues/36
# Report: running Grad-CAM over a large dataset on GPU piles up memory batch after batch until CUDA OOM; users fixed it by tearing the wrapper (and its hooks) down after every batch
# Shape: a GradCAM wrapper whose constructor registers forward/backward hooks (closures over self that store what they see) on the shared model; a new wrapper is built per batch and never removed
# Expect: TML007 line 28; TML007 line 29
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
                self.handlers.append(module.register_forward_hook(save_fmaps(name)))  # expect: TML007
                self.handlers.append(module.register_full_backward_hook(save_grads(name)))  # expect: TML007

    def forward(self, image):
        self.image = image
        self.logits = self.model(image)
        self.probs = F.softmax(self.logits, dim=1)
        return self.probs.sort(dim=1, descending=True)

    def backward(self, ids):
        one_hot = torch.zeros_like(self.logits).scatter_(1, ids, 1.0)
        self.model.zero_grad()
        self.logits.backward(gradient=one_hot)

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
        _, ids = gcam.forward(images)
        gcam.backward(ids=ids[:, [0]])
        regions = gcam.generate(target_layer=target_layer)
        save_fn(batch_idx, regions.cpu().numpy())
