# Source: https://github.com/WoojuLee24/OA-DG/blob/ba6d86e86c65fa9c315c256b79d39cd325f5083d/mmdet/core/hook/feature_hook.py
# Report: audit: FeatureHook registers forward hooks that append layer outputs to model.features; the repo registers them once in before_run and clears the dict in train_step; this variant registers them inside train_step, so one more hook (and closure) piles up on every layer each iteration
# Shape: a detector-like module with a features dict, a hook factory closing over it, train_step returning dict(loss, log_vars) and a runner loop; hooks are (re)registered per step with no handle kept
# Expect: TML007 line 42
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_feature_hook(store, layer_name):
    def hook_function(module, inputs, output):
        store.setdefault(layer_name, []).append(output)
    return hook_function


class AugMixDetector(nn.Module):
    def __init__(self, backbone, neck, head, hook_layers, consistency_weight=10.0):
        super().__init__()
        self.backbone = backbone
        self.neck = neck
        self.head = head
        self.hook_layers = list(hook_layers)
        self.consistency_weight = consistency_weight
        self.features = dict()

    def forward(self, images):
        return self.head(self.neck(self.backbone(images)))

    @staticmethod
    def _layer_consistency(feat):
        clean, aug1, aug2 = torch.chunk(feat, 3, dim=0)
        mixture = (clean + aug1 + aug2) / 3.0
        return F.mse_loss(clean, mixture) + F.mse_loss(aug1, mixture) + F.mse_loss(aug2, mixture)

    def consistency_loss(self):
        return sum(self._layer_consistency(self.features[name][-1]) for name in self.hook_layers)

    def train_step(self, data, optimizer):
        self.features.clear()
        for name, module in self.named_modules():
            if name in self.hook_layers:
                module.register_forward_hook(make_feature_hook(self.features, name))  # expect: TML007
        images = torch.cat([data["img"], data["img_aug1"], data["img_aug2"]], dim=0)
        logits = self(images)
        targets = data["labels"].repeat(3)
        cls_loss = F.cross_entropy(logits, targets)
        jsd = self.consistency_weight * self.consistency_loss()
        loss = cls_loss + jsd
        log_vars = dict(cls_loss=cls_loss.item(), consistency=float(jsd))
        return dict(loss=loss, log_vars=log_vars, num_samples=images.size(0))


def run(model, loader, epochs=12, lr=0.02, device="cuda"):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        model.train()
        for it, data in enumerate(loader):
            data = {k: v.to(device) for k, v in data.items()}
            outputs = model.train_step(data, optimizer)
            optimizer.zero_grad()
            outputs["loss"].backward()
            optimizer.step()
            if it % 50 == 0:
                print(epoch, it, outputs["log_vars"])
    return model
