# Source: https://github.com/KaiyangZhou/deep-person-reid/blob/069356a6e4915fa01b7abb51a15b5dfd816db029/torchreid/engine/engine.py
# Report: audited correct idiom: Engine._evaluate (@torch.no_grad()) moves each batch of query/gallery features to the CPU before appending (issue #409 discusses that exact line)
# Shape: the _feature_extraction closure without features.cpu(): every query and gallery embedding returned by the extract_features helper stays on the GPU until torch.cat
# Expect: TML004 line 35
import time

import numpy as np
import torch
import torch.nn.functional as F

from torchreid import metrics
from torchreid.utils import AverageMeter


class Engine:
    def __init__(self, datamanager, model, use_gpu=True):
        self.datamanager = datamanager
        self.model = model
        self.use_gpu = use_gpu

    @torch.no_grad()
    def _evaluate(self, query_loader, gallery_loader, dist_metric="euclidean",
                  normalize_feature=False, ranks=(1, 5, 10, 20)):
        batch_time = AverageMeter()

        def _feature_extraction(data_loader):
            f_, pids_, camids_ = [], [], []
            for batch_idx, data in enumerate(data_loader):
                imgs, pids, camids = self.parse_data_for_eval(data)
                if self.use_gpu:
                    imgs = imgs.cuda()
                end = time.time()
                features = self.extract_features(imgs)
                batch_time.update(time.time() - end)
                f_.append(features)  # expect: TML004
                pids_.extend(pids.tolist())
                camids_.extend(camids.tolist())
            f_ = torch.cat(f_, 0)
            return f_, np.asarray(pids_), np.asarray(camids_)

        qf, q_pids, q_camids = _feature_extraction(query_loader)
        gf, g_pids, g_camids = _feature_extraction(gallery_loader)
        print("Speed: {:.4f} sec/batch".format(batch_time.avg))

        if normalize_feature:
            qf = F.normalize(qf, p=2, dim=1)
            gf = F.normalize(gf, p=2, dim=1)

        distmat = metrics.compute_distance_matrix(qf, gf, dist_metric)
        distmat = distmat.cpu().numpy()
        cmc, mAP = metrics.evaluate_rank(distmat, q_pids, g_pids, q_camids, g_camids)
        print("mAP: {:.1%}".format(mAP))
        for r in ranks:
            print("Rank-{:<3}: {:.1%}".format(r, cmc[r - 1]))
        return cmc[0]

    def extract_features(self, input):
        return self.model(input)

    def parse_data_for_eval(self, data):
        return data["img"], data["pid"], data["camid"]
