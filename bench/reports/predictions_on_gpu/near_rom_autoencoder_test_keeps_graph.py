# Source: https://github.com/Yash-11/lstm_ROM/blob/394abe984630c815f62eb4ae47ffdba82c06ac62/src/AEPipeline.py
# Report: audit of AEPipeline.test()/generateLatentVecs(): outputs were appended with grad enabled after model.eval(); this is the fixed shape, both methods decorated with @T.no_grad() and each batch's output moved to the CPU before it is kept
# Shape: same pipeline; lists still collect every batch and are concatenated after the loop, but they hold detached CPU tensors
# Expect: near-miss: must be silent
from os.path import join

import h5py
import numpy as np
import torch as T
from torch.utils.data import DataLoader


class AEPipeline:
    def __init__(self, Model, hp, paths, raw_data, dataset_cls, args):
        self.hp = hp
        self.args = args
        self.paths = paths
        self.raw_data = raw_data
        self.dataset_cls = dataset_cls
        self.log = args.logger.info
        self.model = Model(hp, args).to(args.device)

    def load_model(self, epoch):
        ckpt = T.load(join(self.paths.weights, f"AEweights_epoch{epoch}.tar"), map_location=self.args.device)
        self.model.load_state_dict(ckpt["model_state_dict"])

    def save_predictions(self, pred, target, epoch):
        path = join(self.paths.run, f"predDataTest_epoch{epoch}.hdf5")
        with h5py.File(path, "w") as f:
            f.create_dataset("pred", data=pred.detach().cpu().numpy())
            f.create_dataset("target", data=target.detach().cpu().numpy())
        self.log(f"pred data saved at {path}")

    def _loader(self, split, batch_size):
        ds = self.dataset_cls(self.raw_data, split, self.paths, self.hp, info=self.log)
        return DataLoader(ds, batch_size=batch_size, shuffle=False)

    @T.no_grad()
    def test(self):
        loader = self._loader("test", self.hp.batchSizeTestAE)
        epoch = self.hp.loadAEWeightsEpoch
        self.load_model(epoch)
        self.model.eval()
        pred_list, target_list = [], []
        for batch_idx, (inputs, target) in enumerate(loader):
            inputs = inputs.to(self.args.device)
            target = target.to(self.args.device)
            pred, _ = self.model(inputs)
            rel_err = T.mean(T.abs(pred - target) / target, 2)
            pred_list.append(pred.cpu())
            target_list.append(target.cpu())
            self.log(f"({batch_idx}) relative test error: {rel_err.mean().item() * 100:.3f}%")
        preds = T.cat(pred_list, dim=0)
        targets = T.cat(target_list, dim=0)
        self.save_predictions(preds, targets, epoch)

    @T.no_grad()
    def generate_latent_vecs(self):
        loader = self._loader("encode", self.hp.batchSizeEncode)
        self.load_model(self.hp.loadAEWeightsEpoch)
        self.model.eval()
        latents = []
        for inputs in loader:
            inputs = inputs.to(self.args.device)
            _, z = self.model(inputs)
            latents.append(z.cpu())
        latents = T.cat(latents, 0)
        np.save(join(self.paths.run, "LatentVecs.npy"), latents.detach().cpu().numpy())
        return latents.shape
