# Source: https://github.com/ermongroup/ncsn/blob/master/runners/anneal_runner.py
# Report: NCSN's annealed Langevin dynamics sampler keeps every intermediate frame (n_sigmas * n_steps_each, 1000 by default) to save an animation; the repo moves each frame to the CPU as it is recorded
# Shape: images outlives the loop, but each appended frame is computed under torch.no_grad() and copied with .to('cpu'), so only the current x_mod stays on the GPU
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from torchvision.utils import make_grid, save_image


class AnnealRunner:
    def __init__(self, args, config, score_net):
        self.args = args
        self.config = config
        self.score = score_net

    def anneal_Langevin_dynamics(self, x_mod, scorenet, sigmas, n_steps_each=100, step_lr=0.00002):
        images = []
        with torch.no_grad():
            for c, sigma in enumerate(sigmas):
                labels = torch.ones(x_mod.shape[0], device=x_mod.device) * c
                labels = labels.long()
                step_size = step_lr * (sigma / sigmas[-1]) ** 2
                for s in range(n_steps_each):
                    images.append(torch.clamp(x_mod, 0.0, 1.0).to('cpu'))
                    noise = torch.randn_like(x_mod) * np.sqrt(step_size * 2)
                    grad = scorenet(x_mod, labels)
                    x_mod = x_mod + step_size * grad + noise
        return images

    def test(self):
        cfg = self.config
        states = torch.load(os.path.join(self.args.log, "checkpoint.pth"), map_location=cfg.device)
        self.score.load_state_dict(states[0])
        self.score.eval()

        sigmas = np.exp(np.linspace(np.log(cfg.sigma_begin), np.log(cfg.sigma_end), cfg.num_classes))
        grid_size = 8
        samples = torch.rand(grid_size ** 2, cfg.channels, cfg.image_size, cfg.image_size, device=cfg.device)
        all_samples = self.anneal_Langevin_dynamics(samples, self.score, sigmas, 100, 0.00002)

        for i, sample in enumerate(all_samples):
            sample = sample.view(grid_size ** 2, cfg.channels, cfg.image_size, cfg.image_size)
            if cfg.logit_transform:
                sample = torch.sigmoid(sample)
            image_grid = make_grid(sample, nrow=grid_size)
            save_image(image_grid, os.path.join(self.args.image_folder, "image_{}.png".format(i)))
            torch.save(sample, os.path.join(self.args.image_folder, "image_raw_{}.pth".format(i)))
