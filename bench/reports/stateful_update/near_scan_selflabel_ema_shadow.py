# Source: https://github.com/wvangansbeke/Unsupervised-Classification/blob/57dff9223303ad1d906cb1e54c0a04a78dee720d/utils/ema.py
# Report: audited EMA helper of the SCAN self-labeling stage: shadow weights are updated every step as alpha * shadow + (1 - alpha) * weight; the repository reads the weights from model.state_dict() (detached) and writes with copy_
# Shape: as in the repository: the weights come from model.state_dict() (detached tensors, keep_vars=False) and the shadow is updated in place with copy_, so no graph links one step to the next
# Expect: near-miss: must be silent
import torch


class EMA(object):
    def __init__(self, model, alpha=0.999):
        self.shadow = {k: v.clone().detach() for k, v in model.state_dict().items()}
        self.param_keys = [k for k, _ in model.named_parameters()]
        self.alpha = alpha

    def update_params(self, model):
        state = model.state_dict()
        for name in self.param_keys:
            self.shadow[name].copy_(self.alpha * self.shadow[name] + (1 - self.alpha) * state[name])

    def apply_shadow(self, model):
        model.load_state_dict(self.shadow, strict=True)


def selflabel_train(train_loader, model, criterion, optimizer, epoch, ema=None):
    model.train()
    running = 0.0
    for i, batch in enumerate(train_loader):
        images = batch["image"].cuda(non_blocking=True)
        images_augmented = batch["image_augmented"].cuda(non_blocking=True)

        with torch.no_grad():
            output = model(images)[0]
        output_augmented = model(images_augmented)[0]

        loss = criterion(output, output_augmented)
        running += loss.item()

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if ema is not None:
            ema.update_params(model)
            ema.apply_shadow(model)

        if i % 25 == 0:
            print("Epoch: [{}][{}/{}] loss {:.4e}".format(epoch, i, len(train_loader), running / (i + 1)))
