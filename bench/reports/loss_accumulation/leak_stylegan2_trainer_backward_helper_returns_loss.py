# Source: https://github.com/adriansahlman/stylegan2_pytorch/pull/11
# Report: CUDA memory problems while training StyleGAN2: the trainer's _backward helper returned the (graph-attached) scaled loss tensor and the D loop also added the raw loss, so the logged G/D loss sums kept every subdivision's loss graph alive; the fix returns and adds .item() scalars
# Shape: Trainer class; _backward(loss, opt) calls backward then returns the loss tensor; the G and D subdivision loops sum the helper's return value (and the raw loss) into logging totals bound before the loops
# Expect: TML001 line 39; TML001 line 51; TML001 line 52
import torch


class Trainer:
    def __init__(self, G, D, G_opt, D_opt, G_loss_fn, D_loss_fn, prior_generator, batch_fn,
                 subdivisions=1, world_size=None, value_tracker=None):
        self.G, self.D = G, D
        self.G_opt, self.D_opt = G_opt, D_opt
        self.G_loss, self.D_loss = G_loss_fn, D_loss_fn
        self.prior_generator = prior_generator
        self._get_batch = batch_fn
        self.subdivisions = subdivisions
        self.world_size = world_size
        self.value_tracker = value_tracker
        self.seen = 0

    def _backward(self, loss, opt, mul=1, subdivisions=None):
        if loss is None:
            return 0
        mul /= subdivisions or self.subdivisions
        mul /= self.world_size or 1
        if mul != 1:
            loss *= mul
        loss.backward()
        return loss * (self.world_size or 1)

    def train(self, iterations):
        for _ in range(iterations):
            self.D.requires_grad_(False)
            self.G_opt.zero_grad()
            G_loss = 0
            for i in range(self.subdivisions):
                latents, latent_labels = self.prior_generator()
                loss, _ = self.G_loss(G=self.G, D=self.D, latents=latents, latent_labels=latent_labels)
                G_loss += self._backward(loss, self.G_opt)  # expect: TML001
            self.G_opt.step()
            self.D.requires_grad_(True)

            self.G.requires_grad_(False)
            self.D_opt.zero_grad()
            D_loss = 0
            for i in range(self.subdivisions):
                latents, latent_labels = self.prior_generator()
                reals, real_labels = self._get_batch()
                loss, _ = self.D_loss(G=self.G, D=self.D, latents=latents, latent_labels=latent_labels,
                                      reals=reals, real_labels=real_labels)
                D_loss += self._backward(loss, self.D_opt)  # expect: TML001
                D_loss += loss  # expect: TML001
            self.D_opt.step()
            self.G.requires_grad_(True)

            if self.value_tracker is not None:
                self.value_tracker.add("G_loss", G_loss)
                self.value_tracker.add("D_loss", D_loss)
            self.seen += 1
