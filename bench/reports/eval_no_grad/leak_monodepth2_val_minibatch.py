# Source: https://github.com/nianticlabs/monodepth2/blob/master/trainer.py
# Report: one edit away from the repository: the no_grad block around the validation minibatch is dropped, so every val() call saves the encoder/decoder activations for a backward that never comes
# Shape: val() switches all models to eval via the set_eval() helper, then calls process_batch (the same forward used in training) with grad enabled and no backward: higher peak each time it runs inside the training loop
# Expect: TML003 line 70
import torch
import torch.nn.functional as F


class DepthTrainer:
    def __init__(self, models, optimizer, train_loader, val_loader, opt, device):
        self.models = models            # {"encoder": ..., "depth": ..., "pose": ...}
        self.model_optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.val_iter = iter(self.val_loader)
        self.opt = opt
        self.device = device
        self.step = 0

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def run_epoch(self):
        self.set_train()
        for batch_idx, inputs in enumerate(self.train_loader):
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            if batch_idx % self.opt.log_frequency == 0:
                self.log("train", losses["loss"].item())
                self.val()
            self.step += 1

    def process_batch(self, inputs):
        for key, ipt in inputs.items():
            inputs[key] = ipt.to(self.device)
        features = self.models["encoder"](inputs["color_aug", 0, 0])
        outputs = self.models["depth"](features)
        losses = self.compute_losses(inputs, outputs)
        return outputs, losses

    def compute_losses(self, inputs, outputs):
        losses = {}
        total_loss = 0
        for scale in self.opt.scales:
            disp = outputs[("disp", scale)]
            disp = F.interpolate(disp, [self.opt.height, self.opt.width], mode="bilinear", align_corners=False)
            target = inputs[("color", 0, 0)]
            loss = (target.mean(1, True) - disp).abs().mean()
            losses["loss/{}".format(scale)] = loss
            total_loss += loss
        losses["loss"] = total_loss / len(self.opt.scales)
        return losses

    def val(self):
        """Validate the model on a single minibatch."""
        self.set_eval()
        try:
            inputs = next(self.val_iter)
        except StopIteration:
            self.val_iter = iter(self.val_loader)
            inputs = next(self.val_iter)

        outputs, losses = self.process_batch(inputs)  # expect: TML003
        self.log("val", losses["loss"].item())
        del inputs, outputs, losses

        self.set_train()

    def log(self, mode, value):
        print(mode, self.step, value)
