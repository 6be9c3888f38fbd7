# Source: https://github.com/tuttelikz/farabio/blob/HEAD/farabio/models/translation/cyclegan/cyclegan_trainer.py
# Report: variant farabio's CycleganTrainer logger avoided (its own commented-out UnetViz.log sums losses[name] with the old `.data[0]` dropped): the batch-end hook hands attached loss tensors kept on self to a logger that sums the tensors themselves, so every step's loss graph is chained until the epoch reset
# Shape: same trainer with losses passed between per-network methods on self; on_train_batch_end() calls self.logger.log({...}) with self.loss_G etc.; VizLogger.log() does self.losses[name] = self.losses.get(name, 0.0) + value, keeping one growing tensor sum per loss on the GPU
# Expect: TML001 line 83
import itertools
import random
import torch
import torch.nn as nn


class ImagePool:
    def __init__(self, max_size=50):
        self.max_size, self.data = max_size, []

    def push_and_pop(self, images):
        out = []
        for element in images.detach():
            element = element.unsqueeze(0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                out.append(element)
            elif random.random() > 0.5:
                i = random.randrange(self.max_size)
                out.append(self.data[i].clone())
                self.data[i] = element
            else:
                out.append(element)
        return torch.cat(out)


class VizLogger:
    def __init__(self, batches_epoch):
        self.batches_epoch, self.batch, self.losses = batches_epoch, 1, {}

    def log(self, losses):
        for name, value in losses.items():
            self.losses[name] = self.losses.get(name, 0.0) + value
        if self.batch % self.batches_epoch == 0:
            print({k: float(v) / self.batch for k, v in self.losses.items()})
            self.losses, self.batch = {}, 1
        else:
            self.batch += 1


class CycleganTrainer:
    def __init__(self, G_A2B, G_B2A, D_A, D_B, loader, lr=2e-4, device="cuda"):
        self.G_A2B, self.G_B2A, self.D_A, self.D_B = G_A2B, G_B2A, D_A, D_B
        self.loader, self.device = loader, device
        self.mse, self.l1 = nn.MSELoss(), nn.L1Loss()
        self.opt_G = torch.optim.Adam(itertools.chain(G_A2B.parameters(), G_B2A.parameters()), lr=lr, betas=(0.5, 0.999))
        self.opt_D_A = torch.optim.Adam(D_A.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_D_B = torch.optim.Adam(D_B.parameters(), lr=lr, betas=(0.5, 0.999))
        self.pool_A, self.pool_B = ImagePool(), ImagePool()
        self.logger = VizLogger(len(loader))

    def generator_loss(self):
        self.fake_B, self.fake_A = self.G_A2B(self.real_A), self.G_B2A(self.real_B)
        pred_B, pred_A = self.D_B(self.fake_B), self.D_A(self.fake_A)
        self.loss_GAN = self.mse(pred_B, torch.ones_like(pred_B)) + self.mse(pred_A, torch.ones_like(pred_A))
        self.loss_cycle = 10.0 * (self.l1(self.G_B2A(self.fake_B), self.real_A) + self.l1(self.G_A2B(self.fake_A), self.real_B))
        self.loss_G = self.loss_GAN + self.loss_cycle

    def discriminator_loss(self, D, real, fake, pool):
        pred_real, pred_fake = D(real), D(pool.push_and_pop(fake))
        return 0.5 * (self.mse(pred_real, torch.ones_like(pred_real)) + self.mse(pred_fake, torch.zeros_like(pred_fake)))

    def train_batch(self, batch):
        self.real_A, self.real_B = batch["A"].to(self.device), batch["B"].to(self.device)
        self.opt_G.zero_grad()
        self.generator_loss()
        self.loss_G.backward()
        self.opt_G.step()
        self.opt_D_A.zero_grad()
        self.loss_D_A = self.discriminator_loss(self.D_A, self.real_A, self.fake_A, self.pool_A)
        self.loss_D_A.backward()
        self.opt_D_A.step()
        self.opt_D_B.zero_grad()
        self.loss_D_B = self.discriminator_loss(self.D_B, self.real_B, self.fake_B, self.pool_B)
        self.loss_D_B.backward()
        self.opt_D_B.step()

    def on_train_batch_end(self):
        self.logger.log({"loss_G": self.loss_G, "loss_G_GAN": self.loss_GAN,  # expect: TML001
                         "loss_G_cycle": self.loss_cycle, "loss_D": self.loss_D_A + self.loss_D_B})

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.train_batch(batch)
                self.on_train_batch_end()
