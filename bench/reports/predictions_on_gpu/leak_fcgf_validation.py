# Source: https://github.com/chrischoy/FCGF/issues/15
# Report: FCGF's validation ran the feature network without torch.no_grad(), so gradients' bookkeeping was kept during validation and memory use was needlessly high.
# Shape: a metric-learning validation loop calls the model on both point clouds of each pair with autograd enabled.
# Expect: TML003 lines 23, 24
import torch
import torch.nn.functional as F


def feature_match_ratio(f0, f1, pos_pairs, thresh=0.1):
    d = torch.cdist(f0[pos_pairs[:, 0]], f1)
    nn_idx = d.argmin(dim=1)
    return (nn_idx == pos_pairs[:, 1]).float().mean().item()


def validate(model, val_loader, device="cuda", max_iter=200):
    model.eval()
    ratios, losses = [], []
    for i, batch in enumerate(val_loader):
        if i >= max_iter:
            break
        xyz0, xyz1 = batch["xyz0"].to(device), batch["xyz1"].to(device)
        pos_pairs = batch["pos_pairs"].to(device)
        f0 = F.normalize(model(xyz0), dim=1)  # expect: TML003
        f1 = F.normalize(model(xyz1), dim=1)  # expect: TML003
        pos_dist = (f0[pos_pairs[:, 0]] - f1[pos_pairs[:, 1]]).pow(2).sum(1)
        losses.append(pos_dist.mean().item())
        ratios.append(feature_match_ratio(f0, f1, pos_pairs))
    model.train()
    return sum(losses) / len(losses), sum(ratios) / len(ratios)
