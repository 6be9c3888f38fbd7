# Source: https://github.com/Yash-11/lstm_ROM/blob/394abe984630c815f62eb4ae47ffdba82c06ac62/src/AEPipeline.py
# Report: audit of AEPipeline.test()/generateLatentVecs(): after model.eval() the autoencoder runs over the whole test/encode set with grad enabled and every batch's output is appended to a list, so all activations of the set stay alive on the GPU until torch.cat
# Shape: reduced-order-model autoencoder pipeline (torch imported as T); predictions and latent vectors collected in lists across the loader, concatenated and saved to HDF5 after the loop
# Expect: TML001 line 49; TML003 line 47; TML001 line 64; TML003 line 63
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

    def test(self):
        loader = self._loader("test", self.hp.batchSizeTestAE)
        epoch = self.hp.loadAEWeightsEpoch
        self.load_model(epoch)
        self.model.eval()
        pred_list, target_list = [], []
        for batch_idx, (inputs, target) in enumerate(loader):
            inputs = inputs.to(self.args.device)
            target = target.to(self.args.device)
            pred, _ = self.model(inputs)  # expect: TML003
            rel_err = T.mean(T.abs(pred - target) / target, 2)
            pred_list.append(pred)  # expect: TML001
            target_list.append(target.cpu())
            self.log(f"({batch_idx}) relative test error: {rel_err.mean().item() * 100:.3f}%")
        preds = T.cat(pred_list, dim=0)
        targets = T.cat(target_list, dim=0)
        self.save_predictions(preds, targets, epoch)

    def generate_latent_vecs(self):
        loader = self._loader("encode", self.hp.batchSizeEncode)
        self.load_model(self.hp.loadAEWeightsEpoch)
        self.model.eval()
        latents = []
        for inputs in loader:
            inputs = inputs.to(self.args.device)
            _, z = self.model(inputs)  # expect: TML003
            latents.append(z)  # expect: TML001
        latents = T.cat(latents, 0)
        np.save(join(self.paths.run, "LatentVecs.npy"), latents.detach().cpu().numpy())
        return latents.shape
