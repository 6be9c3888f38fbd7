# Source: https://github.com/cszn/KAIR/issues/177
# Report: CUDA out of memory during the first validation of SwinIR training, raised from model.test() -> netG_forward() in KAIR models/model_plain.py; this rewrite drops the `with torch.no_grad():` that ModelPlain.test() wraps around netG_forward
# Shape: test() switches netG to eval and runs the self.E = self.netG(self.L) forward through a helper with grad enabled, once per validation image
# Expect: TML003 line 52

from collections import OrderedDict

import torch
import torch.nn as nn
from torch.optim import Adam

from utils import utils_image as util


class ModelPlain:
    """Train with pixel loss (KAIR-style plain model)."""

    def __init__(self, opt, netG):
        self.opt = opt
        self.opt_train = opt["train"]
        self.device = torch.device("cuda" if opt["gpu_ids"] is not None else "cpu")
        self.netG = netG.to(self.device)
        self.G_lossfn = nn.MSELoss().to(self.device)
        self.G_lossfn_weight = self.opt_train["G_lossfn_weight"]
        self.G_optimizer = Adam(self.netG.parameters(), lr=self.opt_train["G_optimizer_lr"])
        self.log_dict = OrderedDict()

    def feed_data(self, data, need_H=True):
        self.L = data["L"].to(self.device)
        if need_H:
            self.H = data["H"].to(self.device)

    def netG_forward(self):
        self.E = self.netG(self.L)

    def optimize_parameters(self, current_step):
        self.G_optimizer.zero_grad()
        self.netG_forward()
        G_loss = self.G_lossfn_weight * self.G_lossfn(self.E, self.H)
        G_loss.backward()
        clip = self.opt_train["G_optimizer_clipgrad"] if self.opt_train["G_optimizer_clipgrad"] else 0
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(self.netG.parameters(), max_norm=clip, norm_type=2)
        self.G_optimizer.step()
        self.log_dict["G_loss"] = G_loss.item()

    def current_log(self):
        return self.log_dict

    def test(self):
        self.netG.eval()
        self.netG_forward()  # expect: TML003
        self.netG.train()

    def current_visuals(self, need_H=True):
        out_dict = OrderedDict()
        out_dict["L"] = self.L.detach()[0].float().cpu()
        out_dict["E"] = self.E.detach()[0].float().cpu()
        if need_H:
            out_dict["H"] = self.H.detach()[0].float().cpu()
        return out_dict


def main_train_psnr(opt, model, train_loader, test_loader, logger, border):
    current_step = 0
    for epoch in range(1000000):
        for train_data in train_loader:
            current_step += 1
            model.feed_data(train_data)
            model.optimize_parameters(current_step)

            if current_step % opt["train"]["checkpoint_test"] == 0:
                avg_psnr = 0.0
                idx = 0
                for test_data in test_loader:
                    idx += 1
                    model.feed_data(test_data)
                    model.test()

                    visuals = model.current_visuals()
                    E_img = util.tensor2uint(visuals["E"])
                    H_img = util.tensor2uint(visuals["H"])
                    current_psnr = util.calculate_psnr(E_img, H_img, border=border)
                    logger.info("{:->4d}--> {:>10s} | {:<4.2f}dB".format(idx, "img", current_psnr))
                    avg_psnr += current_psnr

                avg_psnr = avg_psnr / idx
                logger.info("<epoch:{:3d}, iter:{:8,d}, Average PSNR : {:<.2f}dB".format(epoch, current_step, avg_psnr))
