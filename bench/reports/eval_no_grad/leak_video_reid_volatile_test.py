# Source: https://github.com/jiyanggao/Video-Person-ReID/blob/71605720c3aafc0066c2700bc43568cde509c8a2/main_video_person_reid.py
# Report: issue #25: test() OOMs even on a 24 GB GPU; the code relies on Variable(volatile=True), which PyTorch >= 0.4 ignores
# Shape: model.eval() then two loader loops call the model with grad enabled (volatile is a no-op); every clip batch saves activations for a backward that never comes
# Expect: TML003 lines 33, 47
import numpy as np
import torch
from torch.autograd import Variable


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
    for batch_idx, (clips, pids, camids) in enumerate(queryloader):
        if use_gpu:
            clips = clips.cuda()
        clips = Variable(clips, volatile=True)
        b, n, s, c, h, w = clips.size()
        feats = model(clips.view(b * n, s, c, h, w))  # expect: TML003
        feats = torch.mean(feats.view(n, -1), 0)
        qf.append(feats.data.cpu())
        q_pids.extend(pids)
        q_camids.extend(camids)
    qf = torch.stack(qf)
    q_pids, q_camids = np.asarray(q_pids), np.asarray(q_camids)

    gf, g_pids, g_camids = [], [], []
    for batch_idx, (clips, pids, camids) in enumerate(galleryloader):
        if use_gpu:
            clips = clips.cuda()
        clips = Variable(clips, volatile=True)
        b, n, s, c, h, w = clips.size()
        feats = model(clips.view(b * n, s, c, h, w))  # expect: TML003
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
