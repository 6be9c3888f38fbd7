# Source: https://github.com/Gingaless/rkg-torch/blob/4796f32811bf9d1245144a344c8e4d576ab33a1a/plr.py
# Report: StyleGAN2 path-length regularizer keeps a running mean of the path lengths on the regularizer object between generator steps; the repository stores it detached (self.pl_mean_var = pl_mean.detach(), later .item())
# Shape: the repository version at this commit: the running mean is written back detached (pl_mean.detach()), so only the current step's path lengths carry a graph; trainer loop in the shape of train.py
# Expect: near-miss: must be silent
import torch
from torch import autograd
from tqdm import tqdm

epsilon = 10e-8


class PathRegularization:

    def __init__(self):
        self.pl_mean_var = 0.0
        self.device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')

    def __call__(self, G, minibatch_size, pl_minibatch_shrink=2, pl_decay=0.01, pl_weight=2.0):
        pl_minibatch_size = minibatch_size // pl_minibatch_shrink
        latent_z = torch.randn(pl_minibatch_size, G.dim_latent, device=self.device)
        G.save_dlatents = True
        fake_image_out = G(latent_z)
        G.save_dlatents = False
        dlatents = G.dlatents
        scale = torch.full((1,), fake_image_out.size()[2:].numel(), device=self.device, dtype=torch.float)
        pl_noise = torch.randn_like(fake_image_out, device=self.device) / torch.sqrt(scale)
        grad, = autograd.grad(outputs=torch.sum(fake_image_out * pl_noise), inputs=dlatents,
                              create_graph=True, retain_graph=True)
        path_lengths = torch.sqrt(grad.pow(2).mean(1) + epsilon)
        pl_mean = self.pl_mean_var + pl_decay * (path_lengths.mean() - self.pl_mean_var)
        pl_penalty = (path_lengths - pl_mean).pow(2).mean() * pl_weight
        # keep the moving average for the next regularization step
        self.pl_mean_var = pl_mean.detach()
        return pl_penalty


plr = PathRegularization()


class StyleGAN2Trainer:

    def __init__(self, G, D, loss, optimG, optimD, batch_size, n_critic=1, lazy_reg=16):
        self.G, self.D, self.loss = G, D, loss
        self.optimG, self.optimD = optimG, optimD
        self.batch_size = batch_size
        self.n_critic = n_critic
        self.lazy_reg = lazy_reg
        self.total_D_iter = 0
        self.total_G_iter = 0
        self.total_G_losses = []

    def __call__(self, dataloader, epochs, device):
        d_loss_epochs, g_loss_epochs = [], []
        for epoch in tqdm(range(epochs), desc='epochs'):
            for i, data in enumerate(dataloader):
                self.D.zero_grad()
                real_sample = data[0].to(device)
                loss_D = self.loss.D(self, real_sample)
                loss_D.backward()
                d_loss_epochs = d_loss_epochs + [loss_D.item()]
                self.optimD.step()
                self.total_D_iter += 1

                if self.total_D_iter % self.n_critic == 0:
                    reg = None
                    self.G.zero_grad()
                    loss_G = self.loss.G(self)
                    g_loss_epochs = g_loss_epochs + [loss_G.item()]
                    self.total_G_losses = self.total_G_losses + [loss_G.item()]
                    if self.lazy_reg > 0 and self.total_G_iter % self.lazy_reg == 0:
                        reg = plr(self.G, self.batch_size)
                        print(" pl : ", reg.item())
                    if reg is not None:
                        loss_G = loss_G + reg
                    loss_G.backward()
                    self.total_G_iter += 1
                    self.optimG.step()

            print('mean loss of D :', sum(d_loss_epochs) / max(len(d_loss_epochs), 1))
            print('mean loss of G :', sum(g_loss_epochs) / max(len(g_loss_epochs), 1))
            d_loss_epochs, g_loss_epochs = [], []
