# Modelled on: https://github.com/PJLab-ADG/nr3d_lib/pull/12
# Report: torch.no_grad needs to be instantiated with parentheses.
import torch as T


def render_val(field, rays, chunk=4096):
    out = []
    with T.no_grad:  # expect: TML014
        for i in range(0, rays.size(0), chunk):
            out.append(field(rays[i:i + chunk]).cpu())
    return T.cat(out)
