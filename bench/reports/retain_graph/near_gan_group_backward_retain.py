# Source: https://github.com/jolibrain/joliGEN/pull/281
# Report: GAN base model ran every loss of every optimizer group with backward(retain_graph=True); the fix set retain_graph=False
# Shape: same getattr-by-name loss loop on self, but each group has a single loss so backward frees the graph (retain_graph=False, as in the fix)
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class OptimGroup:
    def __init__(self, networks, optimizer, forward_functions, loss_backward):
        self.networks_to_optimize = networks
        self.optimizer = optimizer
        self.forward_functions = forward_functions
        self.loss_backward = loss_backward


class PairedGANModel:
    def __init__(self, netG, netD, opt):
        self.netG = netG
        self.netD = netD
        self.opt = opt
        self.scaler = torch.cuda.amp.GradScaler()
        self.networks_groups = [
            OptimGroup(["G"], torch.optim.Adam(netG.parameters(), 2e-4), ["forward_G"], ["loss_G_tot"]),
            OptimGroup(["D"], torch.optim.Adam(netD.parameters(), 2e-4), ["forward_D"], ["loss_D_tot"]),
        ]

    def forward_G(self):
        self.fake_B = self.netG(self.real_A)
        pred_fake = self.netD(self.fake_B)
        self.loss_G_GAN = F.softplus(-pred_fake).mean()
        self.loss_G_L1 = F.l1_loss(self.fake_B, self.real_B) * self.opt.lambda_L1
        self.loss_G_tot = self.loss_G_GAN + self.loss_G_L1

    def forward_D(self):
        pred_real = self.netD(self.real_B)
        pred_fake = self.netD(self.fake_B.detach())
        self.loss_D_tot = F.softplus(-pred_real).mean() + F.softplus(pred_fake).mean()

    def optimize_parameters(self):
        for group in self.networks_groups:
            for forward in group.forward_functions:
                getattr(self, forward)()
            for loss in group.loss_backward:
                ll = self.scaler.scale(getattr(self, loss)) / self.opt.train_iter_size
                ll.backward(retain_graph=False)
            self.scaler.step(group.optimizer)
            self.scaler.update()
            group.optimizer.zero_grad(set_to_none=True)


def train(model, loader, epochs):
    for epoch in range(epochs):
        for data in loader:
            model.real_A = data["A"].cuda()
            model.real_B = data["B"].cuda()
            model.optimize_parameters()
