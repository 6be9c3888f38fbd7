# Source: https://github.com/hust-linyi/MedISeg/blob/main/2DUNet/NetworkTrainer/network_inference.py
# Report: 2D medical segmentation test driver, fixed: the fold checkpoint is loaded with map_location='cpu' and run() is decorated with @torch.no_grad()
# Shape: every TTA forward runs grad-disabled and only numpy copies are kept in the per-batch y_list (re-created each batch); the checkpoint lands on the host and load_state_dict copies it into the GPU model
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from torch.utils.data import DataLoader


class AverageMeterArray:
    def __init__(self, n):
        self.sum = np.zeros(n)
        self.count = 0
        self.avg = np.zeros(n)

    def update(self, vals):
        self.sum += np.asarray(vals, dtype=float)
        self.count += 1
        self.avg = self.sum / self.count


class FlipTTA:
    def __init__(self, flip=True):
        self.flip = flip

    def views(self, img):
        img = img.cpu().numpy()
        return [img, img[..., ::-1], img[..., ::-1, :]] if self.flip else [img]

    def invert(self, preds):
        if not self.flip:
            return preds
        return [preds[0], preds[1][..., ::-1], preds[2][..., ::-1, :]]


class SegInference:
    def __init__(self, opt, build_net, dataset_cls, compute_metrics):
        self.opt = opt
        self.build_net = build_net
        self.dataset_cls = dataset_cls
        self.compute_metrics = compute_metrics

    def set_network(self):
        net = torch.nn.DataParallel(self.build_net(self.opt)).cuda()
        print(f"=> loading trained model in {self.opt.test['model_path']}")
        checkpoint = torch.load(self.opt.test["model_path"], map_location="cpu")
        state = net.state_dict()
        state.update({k: v for k, v in checkpoint["state_dict"].items() if k in state})
        net.load_state_dict(state)
        print(f"=> loaded model at epoch {checkpoint['epoch']}")
        self.net = net.module
        self.net.eval()

    def set_dataloader(self):
        test_set = self.dataset_cls(root_dir=self.opt.root_dir, phase="test", fold=self.opt.fold)
        self.test_loader = DataLoader(test_set, batch_size=self.opt.test["batch_size"],
                                      shuffle=False, drop_last=False)

    @torch.no_grad()
    def run(self):
        names = ["p_recall", "p_precision", "p_F1", "miou"]
        results = AverageMeterArray(len(names))
        tta = FlipTTA(flip=self.opt.test["flip"])
        for data in self.test_loader:
            image, gt = data["image"].cuda(), data["label"]
            y_list = []
            for view in tta.views(image):
                x = torch.from_numpy(view.copy()).cuda()
                if not self.opt.train["deeps"]:
                    y = self.net(x)
                else:
                    y = self.net(x)[0]
                y = torch.softmax(y, dim=1)[:, 1]
                y_list.append(y.cpu().detach().numpy())
            prob = np.mean(tta.invert(y_list), axis=0)
            pred = (prob > 0.5).astype(np.uint8)
            for j in range(pred.shape[0]):
                metrics = self.compute_metrics(pred[j], gt[j].numpy(), names)
                if metrics[names[0]] == -1:
                    continue
                results.update([metrics[n] for n in names])
        out = os.path.join(self.opt.test["save_dir"], "test_results.csv")
        with open(out, "w") as f:
            f.write(",".join(names) + "\n")
            f.write(",".join(f"{v * 100:.4f}" for v in results.avg) + "\n")
        return results.avg
