# Source: https://github.com/taozh2017/HiNet/issues/11
# Report: the fix proposed in the issue: HiNet's test() puts the generator in eval mode and runs the test loop under torch.no_grad()
# Shape: the generator forward runs inside with torch.no_grad(); the metrics helper returns a dict of numpy floats, so the kept scores hold no tensors
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def psnr(a, b):
    mse = float(((a - b) ** 2).mean())
    return 10.0 * np.log10(1.0 / max(mse, 1e-10))


def synthesis_errors(pred_out, real_out):
    """Stitch patches back and score them; everything leaves torch as numpy."""
    pred = pred_out.detach().cpu().numpy().astype(np.float32)
    real = real_out.detach().cpu().numpy().astype(np.float32)
    pred = (pred - pred.min()) / (pred.max() - pred.min() + 1e-8)
    real = (real - real.min()) / (real.max() - real.min() + 1e-8)
    return {"MSE": float(((pred - real) ** 2).mean()),
            "PSNR": psnr(pred, real),
            "MAE": float(np.abs(pred - real).mean())}


def split_task(inputs, task_id):
    src = {1: (0, 1, 2), 2: (0, 2, 3), 3: (0, 3, 2), 4: (2, 3, 0)}[task_id]
    return [inputs[i].flatten(0, 1).unsqueeze(1).float() for i in src]


class LatentSynthModel:
    def __init__(self, opt, generator, discriminator, test_set):
        self.opt = opt
        self.generator = generator.cuda()
        self.discriminator = discriminator.cuda()
        self.test_set = test_set

    def load_generator(self, epoch):
        path = f"{self.opt.save_path}/task_{self.opt.task_id}/generator_{epoch}.pkl"
        self.generator.load_state_dict(torch.load(path, map_location="cuda"), strict=False)

    def test(self, epoch):
        self.load_generator(epoch)
        loader = DataLoader(self.test_set, batch_size=self.opt.batch_size, shuffle=False)
        scores = []
        self.generator.eval()
        with torch.no_grad():
            for ii, inputs in enumerate(loader):
                x_in1, x_in2, x_out = split_task(inputs, self.opt.task_id)
                x_fusion = torch.cat([x_in1, x_in2], dim=1).cuda()
                pred_out, rec1, rec2 = self.generator(x_fusion)
                errors = synthesis_errors(pred_out, x_out)
                print(ii, errors)
                scores.append([errors["MSE"], errors["PSNR"], errors["MAE"]])
        scores = np.array(scores)
        return [epoch] + scores.mean(axis=0).tolist()
