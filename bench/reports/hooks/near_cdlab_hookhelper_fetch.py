# Source: https://github.com/Bobholamovic/CDLab/blob/c3c5179109f0b14eedc7f3022cddda90dda18f44/src/impl/trainers/cd_trainer.py
# Report: CDLab (remote-sensing change detection) fetches intermediate features for TensorBoard each step by entering `with HookHelper(model, fetch_dict, out_dict)`, which registers forward hooks on the named modules and removes every handle in __exit__ (source note: HookHelper: src/utils/utils.py@5743979a240cab8d5701dcacd602d195eb9a0a3b)
# Shape: as in the repository: register_forward_hook runs inside a for loop (and once per training step), but every handle is appended to self._handles and .remove()d when the with block exits, and the closure only stores f.data.clone()
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch
from tqdm import tqdm


class FeatureContainer:
    def __init__(self):
        self._dict = OrderedDict()

    def __setitem__(self, key, val):
        self._dict.setdefault(key, []).append(val)

    def items(self):
        return self._dict.items()


class HookHelper:
    def __init__(self, model, fetch_dict, out_dict):
        self.model = model
        self.fetch_dict = fetch_dict
        self.out_dict = out_dict
        self._handles = []

    def __enter__(self):
        def _proto_forward_hook(y, entry):
            self.out_dict[entry] = y.data.clone()

        for name, module in self.model.named_modules():
            if name in self.fetch_dict:
                entry = self.fetch_dict[name]
                self._handles.append(
                    module.register_forward_hook(
                        lambda m, x, y, entry=entry: _proto_forward_hook(y, entry)
                    )
                )
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        for handle in self._handles:
            handle.remove()


class CDTrainer:
    def __init__(self, model, criterion, optimizer, train_loader, tb_writer, device, tb_intvl=100):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.train_loader, self.tb_writer = train_loader, tb_writer
        self.device, self.tb_intvl = device, tb_intvl
        self.train_step = 0

    def _set_fetch_dict(self):
        return {'decoder.conv_out': 'dec_feat', 'encoder.layer4': 'enc_feat'}

    def train_epoch(self, epoch):
        self.model.train()
        pb = tqdm(self.train_loader)
        for i, (t1, t2, tar) in enumerate(pb):
            t1, t2, tar = t1.to(self.device), t2.to(self.device), tar.to(self.device)
            fetch_dict = self._set_fetch_dict()
            out_dict = FeatureContainer()

            with HookHelper(self.model, fetch_dict, out_dict):
                pred = self.model(t1, t2)

            loss = self.criterion(pred, tar)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            pb.set_description("[{}] Loss: {:.4f}".format(i + 1, loss.item()))

            if i % self.tb_intvl == 0:
                self.tb_writer.add_scalar("Train/running_loss", loss.item(), self.train_step)
                for key, feats in out_dict.items():
                    for idx, feat in enumerate(feats):
                        self.tb_writer.add_image(f"Train/{key}_{idx}", feat[0].mean(0, keepdim=True),
                                                 self.train_step)
            self.train_step += 1
