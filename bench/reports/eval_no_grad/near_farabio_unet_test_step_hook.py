# Source: https://github.com/tuttelikz/farabio/blob/HEAD/farabio/models/segmentation/unet/unet_trainer.py
# Report: fix of farabio's UnetTrainer test path: the base ConvnetTrainer already dispatches evaluate_batch() under `with torch.no_grad()`; doing the same in the test dispatcher means test_step()'s U-Net forward after model.eval() no longer saves activations
# Shape: same hook-style trainer: neither UnetTrainer.evaluate_batch() nor test_step() opens a grad-disabled context itself; the base class's train_epoch() and test() wrap the loops that call them in `with torch.no_grad():`
# Expect: near-miss: must be silent
import os

import torch
from skimage.io import imsave


class ConvnetTrainer:
    def __init__(self, config):
        self.config = config
        self.device = torch.device(config.device)
        self.build_model()

    def train_epoch(self):
        self.model.train()
        self.batch_tloss = 0.0
        for batch in self.train_loader:
            self.training_step(batch)
        with torch.no_grad():
            self.model.eval()
            self.batch_vloss = 0.0
            for batch in self.valid_loader:
                self.evaluate_batch(batch)
                self.batch_vloss += self.val_loss.item()

    def test(self):
        self.model.load_state_dict(torch.load(self.config.model_load_dir, map_location=self.device))
        self.on_test_start()
        with torch.no_grad():
            for test_loop_var in self.test_loop_iter:
                self.test_step(test_loop_var)
                self.on_end_test_batch()


class UnetTrainer(ConvnetTrainer):
    def build_model(self):
        self.model = self.config.net.to(self.device)
        self.criterion = torch.nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.config.learning_rate)
        self.train_loader, self.valid_loader = self.config.train_loader, self.config.valid_loader
        self.test_loader = self.valid_loader

    def training_step(self, batch):
        self.optimizer.zero_grad()
        imgs, masks = batch[0].to(self.device), batch[1].to(self.device)
        self.train_loss = self.criterion(self.model(imgs), masks)
        self.batch_tloss += self.train_loss.item()
        self.train_loss.backward()
        self.optimizer.step()

    def evaluate_batch(self, batch):
        imgs, masks = batch[0].to(self.device), batch[1].to(self.device)
        outputs = self.model(imgs)
        self.val_loss = self.criterion(outputs, masks)

    def on_test_start(self):
        self.model.eval()
        self.test_loop_iter = enumerate(self.test_loader)

    def test_step(self, args):
        self.cur_batch = args[0]
        self.imgs, self.fname = args[-1][0].to(self.device), args[-1][-1]
        outputs = self.model(self.imgs)
        self.pred = torch.sigmoid(outputs) > 0.5
        for i in range(self.imgs.size(0)):
            mask = self.pred[i, 0].cpu().numpy().astype("uint8") * 255
            imsave(os.path.join(self.config.output_mask_dir, self.fname[i]), mask, check_contrast=False)

    def on_end_test_batch(self):
        print(f"{self.cur_batch} / {len(self.test_loader)}")
