# Modelled on: https://github.com/PJLab-ADG/nr3d_lib/pull/12
# Report: near-miss: since PyTorch 2.1 `@torch.no_grad` also works as a decorator without parentheses.
import torch


@torch.no_grad
def render_val(field, rays, chunk=4096):
    return torch.cat([field(rays[i:i + chunk]).cpu() for i in range(0, rays.size(0), chunk)])


@torch.inference_mode()
def render_test(field, rays):
    return field(rays).cpu()
