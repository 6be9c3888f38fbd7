# Source: https://github.com/tianrun-chen/SAM-Adapter-PyTorch/issues/89
# Report: "Eval function is not wrapped with torch.no_grad()"; the fix (as in later forks) wraps model.infer in torch.no_grad()
# Shape: the forward runs under torch.no_grad(); the gathered predictions are copied to the CPU before being kept across batches
# Expect: near-miss: must be silent
import torch
import torch.distributed as dist
import torch.nn as nn
from tqdm import tqdm


class SAMAdapter(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.image_encoder = encoder
        self.mask_decoder = decoder

    def infer(self, inp):
        feats = self.image_encoder(inp)
        return self.mask_decoder(feats)

    def forward(self, inp):
        return self.infer(inp)


def calc_f1(pred, gt):
    pred_bin = (pred > 0.5).float()
    tp = (pred_bin * gt).sum()
    f1 = 2 * tp / (pred_bin.sum() + gt.sum() + 1e-8)
    return f1.item(), 0.0, 0.0, 0.0


def eval_psnr(loader, model, local_rank, eval_type="f1"):
    model.eval()

    if eval_type == "f1":
        metric_fn = calc_f1
        metric1, metric2, metric3, metric4 = "f1", "auc", "none", "none"
    else:
        raise ValueError(eval_type)

    pbar = tqdm(total=len(loader), leave=False, desc="val") if local_rank == 0 else None

    pred_list = []
    gt_list = []
    for batch in loader:
        for k, v in batch.items():
            batch[k] = v.cuda()

        inp = batch["inp"]

        with torch.no_grad():
            pred = torch.sigmoid(model.infer(inp))

        batch_pred = [torch.zeros_like(pred) for _ in range(dist.get_world_size())]
        batch_gt = [torch.zeros_like(batch["gt"]) for _ in range(dist.get_world_size())]

        dist.all_gather(batch_pred, pred)
        pred_list.extend([p.cpu() for p in batch_pred])
        dist.all_gather(batch_gt, batch["gt"])
        gt_list.extend([g.cpu() for g in batch_gt])
        if pbar is not None:
            pbar.update(1)

    if pbar is not None:
        pbar.close()

    pred_all = torch.cat(pred_list, 1)
    gt_all = torch.cat(gt_list, 1)
    result1, result2, result3, result4 = metric_fn(pred_all, gt_all)
    return result1, result2, result3, result4, metric1, metric2, metric3, metric4
