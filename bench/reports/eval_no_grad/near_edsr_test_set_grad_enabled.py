# Source: https://github.com/sanghyun-son/EDSR-PyTorch/blob/master/src/trainer.py
# Report: EDSR super-resolution Trainer.test() turns autograd off with a plain torch.set_grad_enabled(False) call at the top and back on at the end; PSNR is summed as a float into a CPU log tensor
# Shape: set_grad_enabled(False) works as a plain call, so every forward in test() runs grad-disabled; calc_psnr returns a Python float
# Expect: near-miss: must be silent
import math

import torch


def quantize(img, rgb_range):
    pixel_range = 255 / rgb_range
    return img.mul(pixel_range).clamp(0, 255).round().div(pixel_range)


def calc_psnr(sr, hr, scale, rgb_range):
    diff = (sr - hr) / rgb_range
    shave = scale + 6
    valid = diff[..., shave:-shave, shave:-shave]
    mse = valid.pow(2).mean()
    return -10 * math.log10(mse)


class Checkpoint:
    def __init__(self):
        self.log = torch.Tensor()

    def add_log(self, log):
        self.log = torch.cat([self.log, log])

    def write_log(self, msg):
        print(msg)


class Trainer:
    def __init__(self, args, loader, model, loss, optimizer, ckp):
        self.args = args
        self.scale = args.scale
        self.loader_train = loader.loader_train
        self.loader_test = loader.loader_test
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.ckp = ckp

    def train(self):
        self.model.train()
        for batch, (lr, hr, _) in enumerate(self.loader_train):
            lr, hr = self.prepare(lr, hr)
            self.optimizer.zero_grad()
            sr = self.model(lr, 0)
            loss = self.loss(sr, hr)
            loss.backward()
            self.optimizer.step()

    def test(self):
        torch.set_grad_enabled(False)
        self.ckp.write_log("\nEvaluation:")
        self.ckp.add_log(torch.zeros(1, len(self.loader_test), len(self.scale)))
        self.model.eval()
        for idx_data, d in enumerate(self.loader_test):
            for idx_scale, scale in enumerate(self.scale):
                d.dataset.set_scale(idx_scale)
                for lr, hr, filename in d:
                    lr, hr = self.prepare(lr, hr)
                    sr = self.model(lr, idx_scale)
                    sr = quantize(sr, self.args.rgb_range)
                    self.ckp.log[-1, idx_data, idx_scale] += calc_psnr(
                        sr, hr, scale, self.args.rgb_range
                    )
                self.ckp.log[-1, idx_data, idx_scale] /= len(d)
                best = self.ckp.log.max(0)
                self.ckp.write_log("[{} x{}]\tPSNR: {:.3f} (Best: {:.3f})".format(
                    d.dataset.name, scale,
                    self.ckp.log[-1, idx_data, idx_scale],
                    best[0][idx_data, idx_scale]))
        torch.set_grad_enabled(True)

    def prepare(self, *args):
        device = torch.device("cpu" if self.args.cpu else "cuda")

        def _prepare(tensor):
            if self.args.precision == "half":
                tensor = tensor.half()
            return tensor.to(device)

        return [_prepare(a) for a in args]
