# Source: https://github.com/ImprintLab/MedSegDiff/issues/23
# Report: sampling with DPM-Solver grows GPU memory by ~2 GB per ensemble member until CUDA OOM; fixed (PR #158) by detaching the sample returned from the solver
# Shape: the solver's final model call is outside its no_grad block, but p_sample_loop_known detaches the sample right after the solver returns, so enslist only keeps plain tensors
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def staple(stack):
    return stack.mean(dim=0, keepdim=True)


def normalize(t):
    return (t - t.min()) / (t.max() - t.min() + 1e-8)


class SegUNet(nn.Module):
    def __init__(self, in_ch=5):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(in_ch, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, 1, 3, padding=1))
        self.cal_head = nn.Conv2d(in_ch, 1, 1)

    def forward(self, x, t):
        return self.body(x), torch.sigmoid(self.cal_head(x))


class DPMSolver:
    def __init__(self, model, img, betas):
        self.model = model
        self.img = img
        self.betas = betas

    def model_fn(self, x, t):
        eps, _ = self.model(torch.cat((self.img, x), dim=1), t)
        return eps

    def sample(self, x, steps=20):
        timesteps = torch.linspace(1.0, 1e-3, steps + 1, device=x.device)
        with torch.no_grad():
            prev = self.model_fn(x, timesteps[0])
            for step in range(1, steps + 1):
                t = timesteps[step]
                h = timesteps[step - 1] - t
                x = x - h * prev
                if step < steps:
                    prev = self.model_fn(x, t)
        # final denoising call happens after the no_grad block
        out = self.model(torch.cat((self.img, x), dim=1), timesteps[-1])
        x, cal = out
        return x, cal


class GaussianDiffusion:
    def __init__(self, betas):
        self.betas = betas

    def p_sample_loop_known(self, model, img, steps=20):
        device = next(model.parameters()).device
        img = img.to(device)
        noise = torch.randn_like(img[:, :1, ...])
        solver = DPMSolver(model, img[:, :-1, ...], self.betas)
        sample, cal = solver.sample(noise, steps=steps)
        sample = sample.detach()
        cal = cal.detach()
        sample[:, -1, :, :] = normalize(sample[:, -1, :, :])
        cal_out = torch.clamp(cal + 0.25 * sample[:, -1, :, :].unsqueeze(1), 0, 1)
        return sample, cal, cal_out


def run_sampling(loader, model, diffusion, num_ensemble=5, steps=20):
    device = next(model.parameters()).device
    model.eval()
    results = []
    for b, m, path in loader:
        c = torch.randn_like(b[:, :1, ...])
        img = torch.cat((b, c), dim=1).to(device)
        enslist = []
        for i in range(num_ensemble):
            sample, cal, cal_out = diffusion.p_sample_loop_known(model, img, steps=steps)
            enslist.append(sample[:, -1, :, :])
        ensres = staple(torch.stack(enslist, dim=0)).squeeze(0)
        results.append((path, ensres.detach().cpu()))
    return results
