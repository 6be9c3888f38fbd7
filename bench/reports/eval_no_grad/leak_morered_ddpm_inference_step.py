# Source: https://github.com/khaledkah/MoreRed/pull/25
# Report: MoreRed's DDPM sampler ran the reverse diffusion (T denoiser calls per molecule batch) with autograd on; the PR "removing torch gradient computation during sampling" adds @torch.no_grad() to inference_step and denoise
# Shape: denoise() loops over T reverse steps and calls self.inference_step(batch, i), which runs the eval-mode denoiser on a dict of inputs and returns model_out[key].detach(); the detach keeps the chain short, but every step's forward still records a full graph (higher peak per step, T steps per sample)
# Expect: TML003 line 57
from typing import Dict, Optional

import torch
from torch import nn

R, IDX_M, N_ATOMS = "_positions", "_idx_m", "_n_atoms"


class GaussianProcess:
    def __init__(self, betas: torch.Tensor):
        self.betas = betas
        self.alphas_bar = torch.cumprod(1.0 - betas, dim=0)

    def get_T(self) -> int:
        return len(self.betas)

    def normalize_time(self, t: torch.Tensor) -> torch.Tensor:
        return t.float() / self.get_T()

    def reverse_step(self, x_t, eps, idx_m, t):
        beta, a_bar = self.betas[t].to(x_t.device), self.alphas_bar[t].to(x_t.device)
        mean = (x_t - beta[:, None] / (1 - a_bar[:, None]).sqrt() * eps) / (1 - beta[:, None]).sqrt()
        return mean + beta[:, None].sqrt() * torch.randn_like(x_t)


class Sampler:
    def __init__(self, diffusion_process, denoiser: nn.Module, device="cuda", save_progress=False, progress_stride=10):
        self.diffusion_process = diffusion_process
        self.device = device
        self.save_progress = save_progress
        self.progress_stride = progress_stride
        self.results_on_cpu = True
        self.denoiser = denoiser.to(self.device).eval()


class DDPM(Sampler):
    """Plain ancestral DDPM sampler over atom positions."""

    def __init__(self, diffusion_process, denoiser, time_key="t", noise_pred_key="eps_pred", **kwargs):
        super().__init__(diffusion_process, denoiser, **kwargs)
        self.time_key = time_key
        self.noise_pred_key = noise_pred_key

    def inference_step(self, inputs: Dict[str, torch.Tensor], iter: int):
        time_steps = torch.full_like(inputs[N_ATOMS], fill_value=iter, dtype=torch.long, device=self.device)
        inputs[self.time_key] = self.diffusion_process.normalize_time(time_steps)
        # broadcast the molecule-level time step to its atoms
        inputs[self.time_key] = inputs[self.time_key][inputs[IDX_M]]
        for key, val in inputs.items():
            if val.dtype == torch.float64:
                inputs[key] = val.float()

        model_out = self.denoiser(inputs)  # expect: TML003
        noise_pred = model_out[self.noise_pred_key].detach()
        return time_steps, noise_pred

    def denoise(self, inputs: Dict[str, torch.Tensor], t: Optional[int] = None):
        if t is None:
            t = self.diffusion_process.get_T()
        batch = {prop: val.clone().to(self.device) for prop, val in inputs.items()}

        hist = []
        for i in range(t - 1, -1, -1):
            time_steps, noise = self.inference_step(batch, i)

            if self.save_progress and (i % self.progress_stride == 0):
                hist.append({R: batch[R].cpu().float().clone(), self.time_key: time_steps.cpu()})

            batch[R] = self.diffusion_process.reverse_step(
                batch[R], noise, batch[IDX_M], time_steps[inputs[IDX_M]]
            )

        x_0 = {R: batch[R].cpu() if self.results_on_cpu else batch[R]}
        num_steps = torch.full_like(batch[N_ATOMS], t, dtype=torch.long, device="cpu")
        return x_0, num_steps, hist
