# Source: https://github.com/Bobholamovic/CDLab/blob/c3c5179109f0b14eedc7f3022cddda90dda18f44/src/impl/trainers/cd_trainer.py
# Report: CDLab (remote-sensing change detection) fetches intermediate features for TensorBoard each step by entering `with HookHelper(model, fetch_dict, out_dict)`, which registers forward hooks on the named modules and removes every handle in __exit__ (source note: HookHelper: src/utils/utils.py@5743979a240cab8d5701dcacd602d195eb9a0a3b)
# Shape: the rewrite drops the context manager: a trainer helper _attach_fetch_hooks registers the forward hooks every step and throws the handles away, so hooks (and the closures holding each step's out_dict) pile up on the persistent model
# Expect: TML007 line 36
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


class CDTrainer:
    def __init__(self, model, criterion, optimizer, train_loader, tb_writer, device, tb_intvl=100):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.train_loader, self.tb_writer = train_loader, tb_writer
        self.device, self.tb_intvl = device, tb_intvl
        self.train_step = 0

    def _attach_fetch_hooks(self, fetch_dict, out_dict):
        def _proto_forward_hook(y, entry):
            out_dict[entry] = y.data.clone()

        for name, module in self.model.named_modules():
            if name in fetch_dict:
                entry = fetch_dict[name]
                module.register_forward_hook(  # expect: TML007
                    lambda m, x, y, entry=entry: _proto_forward_hook(y, entry)
                )

    def _set_fetch_dict(self):
        return {'decoder.conv_out': 'dec_feat', 'encoder.layer4': 'enc_feat'}

    def train_epoch(self, epoch):
        self.model.train()
        pb = tqdm(self.train_loader)
        for i, (t1, t2, tar) in enumerate(pb):
            t1, t2, tar = t1.to(self.device), t2.to(self.device), tar.to(self.device)
            fetch_dict = self._set_fetch_dict()
            out_dict = FeatureContainer()

            self._attach_fetch_hooks(fetch_dict, out_dict)
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
