# Source: https://github.com/guopengf/FL-MRCM/issues/2
# Report: a user reported GPU memory leakage when evaluating; the author replied that `with torch.no_grad():` is missing in the evaluation code of models/test.py and that the leakage may result from it.
# Shape: evaluate_recon() of the plain evaluator runs the reconstruction network on every validation batch with autograd enabled (only numpy copies and floats are kept), so each forward records a full graph that is built and discarded per batch.
# Expect: TML003 line 27
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from utils import evaluate


class EvaluatorNormal:
    def __init__(self, datatest, args, writer, device):
        self.args = args
        self.device = device
        self.writer = writer
        self.data_loader = DataLoader(datatest, batch_size=args.bs, pin_memory=False)

    def evaluate_recon(self, net_g, epoch=None):
        net_g.eval()
        test_logs = []
        for batch in self.data_loader:
            inp, target, mean, std, _, fname, slice_idx = batch
            output = net_g(inp.to(self.device))  # expect: TML003
            test_loss = F.l1_loss(output, target.to(self.device))
            mean = mean.unsqueeze(1).unsqueeze(2).to(self.device)
            std = std.unsqueeze(1).unsqueeze(2).to(self.device)
            test_logs.append({
                "fname": fname,
                "slice": slice_idx,
                "output": (output * std + mean).detach().cpu().numpy(),
                "target": (target.to(self.device) * std + mean).cpu().numpy(),
                "loss": test_loss.item(),
            })
        outputs, targets = defaultdict(list), defaultdict(list)
        for log in test_logs:
            for i, (fname, sl) in enumerate(zip(log["fname"], log["slice"])):
                outputs[fname].append((sl, log["output"][i]))
                targets[fname].append((sl, log["target"][i]))
        metrics = dict(val_loss=[log["loss"] for log in test_logs], nmse=[], ssim=[], psnr=[])
        for fname in outputs:
            output = np.stack([o for _, o in sorted(outputs[fname])])
            target = np.stack([t for _, t in sorted(targets[fname])])
            metrics["nmse"].append(evaluate.nmse(target, output))
            metrics["ssim"].append(evaluate.ssim(target, output))
            metrics["psnr"].append(evaluate.psnr(target, output))
        metrics = {name: np.mean(values) for name, values in metrics.items()}
        print(metrics, "\nNo. Slices:", len(outputs))
        if self.writer is not None:
            for name in ("nmse", "ssim", "psnr"):
                self.writer.add_scalar(f"Dev_Loss/{name.upper()}", metrics[name], epoch)
        torch.cuda.empty_cache()
        return metrics
