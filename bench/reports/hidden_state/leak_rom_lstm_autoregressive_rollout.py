# Source: https://github.com/Yash-11/lstm_ROM/blob/5d53a3743be2963029de126f0fd5c0637bff7527/src/Pipeline.py
# Report: audit of ModelPipeline.test(): after model.eval(), with grad enabled, the LSTM surrogate is rolled out autoregressively; the input window is rebuilt from its own previous value and each attached prediction, the rollout is grown with torch.cat, and every batch's attached rollout is kept in a list
# Shape: latent-space LSTM reduced-order model (torch imported as T); rolling window carried across unroll steps, flag-based cat accumulator, list of rollouts saved to HDF5 after the loader
# Expect: TML005 line 49; TML003 line 48; TML008 line 53; TML001 line 58
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
            pred = None
            for step in range(hp.timeStepsUnroll):
                pred_i = self.model(window)  # expect: TML003
                window = T.cat((window[:, 1:], pred_i[:, None]), dim=1)  # expect: TML005
                if pred is None:
                    pred = pred_i[:, None]
                else:
                    pred = T.cat((pred, pred_i[:, None]), dim=1)  # expect: TML008
            pred = self.rescale(pred, test_set.max, test_set.min)
            target = self.rescale(target, test_set.max, test_set.min)
            rel_err = T.mean(T.abs(pred - target) / target, 2) * 100
            self.info(f"({batch_idx}) mean relative error {rel_err.mean().item():.3f}%")
            pred_list.append(pred)  # expect: TML001
            target_list.append(target.cpu())
        preds, targets = T.cat(pred_list, dim=0), T.cat(target_list, dim=0)
        self.save_predictions(preds, targets, epoch)
        return preds[0].detach().cpu().numpy()
