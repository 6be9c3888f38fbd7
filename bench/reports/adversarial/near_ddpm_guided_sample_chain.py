# Source: https://github.com/TeaPearce/Conditional_Diffusion_MNIST/issues/12
# Report: (fixed version) sampling from a trained conditional DDPM used a lot of memory; x_i was rebuilt from the U-Net's eps prediction at every one of the n_T steps and never detached, fixed by adding x_i = x_i.detach() at the end of the sampling loop
# Shape: same guided sampler called with grad enabled, but x_i is detached at the end of every timestep (the fix from the report), so no chain is carried
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torchvision.utils import save_image


class DDPM(nn.Module):
    def __init__(self, nn_model, schedules, n_T, device):
        super().__init__()
        self.nn_model = nn_model.to(device)
        for k, v in schedules.items():
            self.register_buffer(k, v)
        self.n_T = n_T
        self.device = device

    def forward(self, x, c):
        ts = torch.randint(1, self.n_T + 1, (x.shape[0],), device=self.device)
        noise = torch.randn_like(x)
        x_t = self.sqrtab[ts, None, None, None] * x + self.sqrtmab[ts, None, None, None] * noise
        mask = torch.zeros_like(c)
        return nn.functional.mse_loss(noise, self.nn_model(x_t, c, ts / self.n_T, mask))

    def sample(self, n_sample, size, guide_w=0.0):
        device = self.device
        x_i = torch.randn(n_sample, *size, device=device)
        c_i = torch.arange(0, 10, device=device).repeat(n_sample // 10)
        context_mask = torch.zeros_like(c_i)
        c_i = c_i.repeat(2)
        context_mask = context_mask.repeat(2)
        context_mask[n_sample:] = 1.0

        x_i_store = []
        for i in range(self.n_T, 0, -1):
            t_is = torch.full((n_sample, 1, 1, 1), i / self.n_T, device=device)
            x_i = x_i.repeat(2, 1, 1, 1)
            t_is = t_is.repeat(2, 1, 1, 1)
            z = torch.randn(n_sample, *size, device=device) if i > 1 else 0

            eps = self.nn_model(x_i, c_i, t_is, context_mask)
            eps = (1 + guide_w) * eps[:n_sample] - guide_w * eps[n_sample:]
            x_i = x_i[:n_sample]
            x_i = self.oneover_sqrta[i] * (x_i - eps * self.mab_over_sqrtmab[i]) + self.sqrt_beta_t[i] * z
            if i % 20 == 0 or i < 8:
                x_i_store.append(x_i.detach().cpu().numpy())
            x_i = x_i.detach()
        return x_i, np.array(x_i_store)


def generate(ddpm, out_dir, guide_ws=(0.0, 0.5, 2.0)):
    ddpm.eval()
    for w in guide_ws:
        x_gen, _ = ddpm.sample(40, (1, 28, 28), guide_w=w)
        save_image(x_gen * -1 + 1, f"{out_dir}/sample_w{w}.png", nrow=10)
