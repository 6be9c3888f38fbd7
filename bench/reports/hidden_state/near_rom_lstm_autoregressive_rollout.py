# Source: https://github.com/Yash-11/lstm_ROM/blob/5d53a3743be2963029de126f0fd5c0637bff7527/src/Pipeline.py
# Report: audit of ModelPipeline.test(): the autoregressive LSTM rollout ran with grad enabled after model.eval(), carrying the attached window across unroll steps and keeping every attached rollout; this is the fixed shape under @T.no_grad()
# Shape: same rolling window carried across unroll steps (now without a graph), rollout written into a preallocated tensor by index, each batch's rollout moved to the CPU before it is kept
# Expect: near-miss: must be silent
from os.path import join

import h5py
import torch as T
from torch.utils.data import DataLoader


class ModelPipeline:
    def __init__(self, Model, hp, paths, raw_data, dataset_cls, args):
        self.hp = hp
        self.args = args
        self.paths = paths
        self.raw_data = raw_data
        self.dataset_cls = dataset_cls
        self.info = args.info
        self.model = Model(hp, args).to(args.device)

    def load_model(self, epoch):
        ckpt = T.load(join(self.paths.weights, f"weights_epoch{epoch}.tar"), map_location=self.args.device)
        self.model.load_state_dict(ckpt["model_state_dict"])

    def rescale(self, x, hi, lo, a=-0.5, b=0.5):
        return (x - a) * (hi - lo) / (b - a) + lo

    def save_predictions(self, pred, target, epoch):
        path = join(self.paths.run, f"predDataTest_epoch{epoch}.hdf5")
        with h5py.File(path, "w") as f:
            f.create_dataset("pred", data=pred.detach().cpu().numpy())
            f.create_dataset("target", data=target.detach().cpu().numpy())

    @T.no_grad()
    def test(self):
        hp = self.hp
        test_set = self.dataset_cls(self.raw_data, "test", self.paths, hp, info=self.info)
        loader = DataLoader(test_set, batch_size=hp.batchSizeTest, shuffle=False)
        epoch = hp.loadWeightsEpoch
        self.load_model(epoch)
        self.model.eval()
        pred_list, target_list = [], []
        for batch_idx, (window, target) in enumerate(loader):
            window = window.to(self.args.device)
            target = target.to(self.args.device)
            pred = T.empty(window.size(0), hp.timeStepsUnroll, window.size(-1), device=window.device)
            for step in range(hp.timeStepsUnroll):
                pred_i = self.model(window)
                window = T.cat((window[:, 1:], pred_i[:, None]), dim=1)
                pred[:, step] = pred_i
            pred = self.rescale(pred, test_set.max, test_set.min)
            target = self.rescale(target, test_set.max, test_set.min)
            rel_err = T.mean(T.abs(pred - target) / target, 2) * 100
            self.info(f"({batch_idx}) mean relative error {rel_err.mean().item():.3f}%")
            pred_list.append(pred.cpu())
            target_list.append(target.cpu())
        preds, targets = T.cat(pred_list, dim=0), T.cat(target_list, dim=0)
        self.save_predictions(preds, targets, epoch)
        return preds[0].detach().cpu().numpy()
