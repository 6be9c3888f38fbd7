# Source: https://github.com/JianghaiSCU/R2RNet/pull/1
# Report: R2RNet's evaluate() ran out of CUDA memory; the PR "Save CUDA memory when evaluating" wraps the evaluation loop in torch.no_grad()
# Shape: the fix: the whole per-image loop of evaluate() runs under torch.no_grad(), so self.forward() builds no graph; results are read from detached CPU copies on self
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image


class TinyDecom(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        out = torch.sigmoid(self.body(x))
        return out[:, :3], out[:, 3:4]


class RetinexNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.decom = TinyDecom()
        self.denoise = nn.Conv2d(4, 3, 3, padding=1)
        self.relight = nn.Conv2d(4, 1, 3, padding=1)

    def forward(self, input_low, input_high):
        low = torch.from_numpy(input_low).float().cuda()
        high = torch.from_numpy(input_high).float().cuda()
        r_low, i_low = self.decom(low)
        r_high, i_high = self.decom(high)
        r_clean = self.denoise(torch.cat((r_low, i_low), dim=1))
        i_delta = self.relight(torch.cat((r_clean, i_low), dim=1))
        i_low_3 = torch.cat((i_low, i_low, i_low), dim=1)
        i_delta_3 = torch.cat((i_delta, i_delta, i_delta), dim=1)

        losses = {
            "decom": F.l1_loss(r_low * i_low_3, low) + F.l1_loss(r_high * i_high, high),
            "denoise": F.l1_loss(r_clean, r_high),
            "relight": F.l1_loss(r_clean * i_delta_3, high),
        }

        self.output_r_low = r_low.detach().cpu()
        self.output_i_low = i_low_3.detach().cpu()
        self.output_s = (r_clean * i_delta_3).detach().cpu()
        return losses

    def evaluate(self, epoch_num, eval_low_names, vis_dir, train_phase):
        print("Evaluating for phase %s / epoch %d..." % (train_phase, epoch_num))
        with torch.no_grad():  # otherwise the intermediate graph takes a lot of CUDA memory
            for idx in range(len(eval_low_names)):
                img = np.array(Image.open(eval_low_names[idx]), dtype="float32") / 255.0
                img = np.transpose(img, (2, 0, 1))
                input_low_eval = np.expand_dims(img, axis=0)

                if train_phase == "Decom":
                    self.forward(input_low_eval, input_low_eval)
                    result = np.concatenate([np.squeeze(self.output_r_low.numpy()),
                                             np.squeeze(self.output_i_low.numpy())], axis=2)
                else:
                    self.forward(input_low_eval, input_low_eval)
                    result = np.squeeze(self.output_s.numpy())

                result = np.transpose(result, (1, 2, 0))
                im = Image.fromarray(np.clip(result * 255.0, 0, 255.0).astype("uint8"))
                im.save(os.path.join(vis_dir, "eval_%s_%d_%d.png" % (train_phase, idx + 1, epoch_num)))
