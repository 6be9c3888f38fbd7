# Source: https://github.com/jiyanggao/Video-Person-ReID/blob/71605720c3aafc0066c2700bc43568cde509c8a2/main_video_person_reid.py
# Report: fixed form of the issue #25 OOM: feature extraction wrapped in torch.no_grad() (the fix users applied once volatile=True stopped working)
# Shape: the same two loader loops run inside `with torch.no_grad():`; features leave via .data.cpu() and are stacked on the CPU after the loops
# Expect: near-miss: must be silent
import numpy as np
import torch


def pairwise_sq_dist(qf, gf):
    m, n = qf.size(0), gf.size(0)
    dist = torch.pow(qf, 2).sum(dim=1, keepdim=True).expand(m, n) + \
        torch.pow(gf, 2).sum(dim=1, keepdim=True).expand(n, m).t()
    dist.addmm_(qf, gf.t(), beta=1, alpha=-2)
    return dist.numpy()


def cmc_map(distmat, q_pids, g_pids, q_camids, g_camids):
    order = np.argsort(distmat, axis=1)
    matches = (g_pids[order] == q_pids[:, None]).astype(np.int32)
    cmc = matches.cumsum(axis=1).clip(max=1).mean(axis=0)
    return cmc, float(matches[:, 0].mean())


def test(model, queryloader, galleryloader, pool, use_gpu, ranks=(1, 5, 10, 20)):
    model.eval()
    qf, q_pids, q_camids = [], [], []
    with torch.no_grad():
        for batch_idx, (clips, pids, camids) in enumerate(queryloader):
            if use_gpu:
                clips = clips.cuda()
            b, n, s, c, h, w = clips.size()
            feats = model(clips.view(b * n, s, c, h, w))
            feats = torch.mean(feats.view(n, -1), 0)
            qf.append(feats.data.cpu())
            q_pids.extend(pids)
            q_camids.extend(camids)
    qf = torch.stack(qf)
    q_pids, q_camids = np.asarray(q_pids), np.asarray(q_camids)

    gf, g_pids, g_camids = [], [], []
    with torch.no_grad():
        for batch_idx, (clips, pids, camids) in enumerate(galleryloader):
            if use_gpu:
                clips = clips.cuda()
            b, n, s, c, h, w = clips.size()
            feats = model(clips.view(b * n, s, c, h, w))
            feats = feats.view(n, -1)
            if pool == 'avg':
                feats = torch.mean(feats, 0)
            else:
                feats, _ = torch.max(feats, 0)
            gf.append(feats.data.cpu())
            g_pids.extend(pids)
            g_camids.extend(camids)
    gf = torch.stack(gf)
    g_pids, g_camids = np.asarray(g_pids), np.asarray(g_camids)

    distmat = pairwise_sq_dist(qf, gf)
    cmc, mAP = cmc_map(distmat, q_pids, g_pids, q_camids, g_camids)
    print("mAP: {:.1%}".format(mAP))
    for r in ranks:
        print("Rank-{:<3}: {:.1%}".format(r, cmc[r - 1]))
    return cmc[0]
