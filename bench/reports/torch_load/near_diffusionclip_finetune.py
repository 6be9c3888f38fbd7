# Source: https://github.com/gwang-kim/DiffusionCLIP/blob/794d8abad632316fe87b4813fbc10c7f38778801/diffusionclip.py
# Report: fixed variant of the audited clip_finetune(): checkpoints are mapped straight to the target device instead of to the device they were saved from (also: VRAM report: https://github.com/gwang-kim/DiffusionCLIP/issues/19)
# Shape: same finetune loop with map_location=self.device on both loads (as the hub branch already does); the denoising chain x = denoising_step(x, ...) is restarted from x_lat.clone() per image and ends in loss.backward(), so it is intended backprop through the sampler, not a leak
# Expect: near-miss: must be silent
import os
import time

import numpy as np
import torch
from torch import nn

from models.ddpm.diffusion import DDPM
from utils.diffusion_utils import denoising_step
from losses.clip_loss import CLIPLoss


class DiffusionCLIP(object):
    def __init__(self, args, config, device=None):
        self.args = args
        self.config = config
        self.device = device or torch.device("cuda")
        self.betas = torch.linspace(1e-4, 2e-2, 1000, device=self.device)
        self.logvar = np.log(np.linspace(1e-4, 2e-2, 1000))
        self.src_txts = args.src_txts
        self.trg_txts = args.trg_txts

    def _seq(self, n_step):
        seq = [int(s) for s in np.linspace(0, 1, n_step) * self.args.t_0]
        return seq, [-1] + seq[:-1]

    def clip_finetune(self, img_lat_pairs):
        model = DDPM(self.config)
        url = "https://example.invalid/checkpoints/celeba_hq.ckpt"
        if self.args.model_path:
            init_ckpt = torch.load(self.args.model_path, map_location=self.device)
        else:
            init_ckpt = torch.hub.load_state_dict_from_url(url, map_location=self.device)
        model.load_state_dict(init_ckpt)
        model.to(self.device)
        model = torch.nn.DataParallel(model)

        optim_ft = torch.optim.Adam(model.parameters(), weight_decay=0, lr=self.args.lr_clip_finetune)
        init_opt_ckpt = optim_ft.state_dict()
        clip_loss_func = CLIPLoss(self.device, lambda_direction=1, clip_model=self.args.clip_model_name)
        seq_train, seq_train_next = self._seq(self.args.n_train_step)
        n = self.args.bs_train

        for src_txt, trg_txt in zip(self.src_txts, self.trg_txts):
            model.module.load_state_dict(init_ckpt)
            optim_ft.load_state_dict(init_opt_ckpt)
            clip_loss_func.target_direction = None

            for it_out in range(self.args.n_iter):
                exp_id = os.path.split(self.args.exp)[-1]
                save_name = f'checkpoint/{exp_id}_{trg_txt.replace(" ", "_")}-{it_out}.pth'
                if os.path.exists(save_name):
                    print(f"{save_name} already exists.")
                    model.module.load_state_dict(torch.load(save_name, map_location=self.device))
                    continue

                for step, (x0, x_id, x_lat) in enumerate(img_lat_pairs):
                    model.train()
                    start = time.time()
                    optim_ft.zero_grad()
                    x = x_lat.clone()
                    for i, j in zip(reversed(seq_train), reversed(seq_train_next)):
                        t = (torch.ones(n) * i).to(self.device)
                        t_next = (torch.ones(n) * j).to(self.device)
                        x = denoising_step(x, t=t, t_next=t_next, models=model,
                                           logvars=self.logvar, b=self.betas,
                                           eta=self.args.eta)
                    loss_clip = -torch.log((2 - clip_loss_func(x0, src_txt, x, trg_txt)) / 2)
                    loss_l1 = nn.L1Loss()(x0, x)
                    loss = self.args.clip_loss_w * loss_clip + self.args.l1_loss_w * loss_l1
                    loss.backward()
                    optim_ft.step()
                    print(f"CLIP {step}-{it_out}: loss_clip: {loss_clip.item():.3f} "
                          f"({time.time() - start:.2f}s)")
                    if step == self.args.n_train_img - 1:
                        break

                torch.save(model.module.state_dict(), save_name)
        return model
