# Source: https://github.com/akanimax/pro_gan_pytorch/pull/12
# Report: ProGAN's WGAN-GP loss leaked GPU memory every batch because the gradient penalty used backward(create_graph=True) (pytorch/pytorch#4661); the PR switched to the wgan-gp autograd.grad formulation.
# Shape: Fixed form: torch.autograd.grad(..., create_graph=True) returns the input gradient without writing graph-carrying .grad into the critic parameters.
# Expect: near-miss: must be silent
import torch


class WGAN_GP:
    def __init__(self, dis, drift=0.001, use_gp=True):
        self.dis = dis
        self.drift = drift
        self.use_gp = use_gp

    def _gradient_penalty(self, real, fake, height, alpha, reg_lambda=10.0):
        eps = torch.rand(real.shape[0], 1, 1, 1, device=real.device)
        merged = (eps * real + (1 - eps) * fake).detach()
        merged.requires_grad_(True)
        op = self.dis(merged, height, alpha)
        gradient = torch.autograd.grad(outputs=op, inputs=merged,
                                       grad_outputs=torch.ones_like(op),
                                       create_graph=True, retain_graph=True,
                                       only_inputs=True)[0]
        gradient = gradient.view(gradient.shape[0], -1)
        return reg_lambda * ((gradient.norm(p=2, dim=1) - 1) ** 2).mean()

    def dis_loss(self, real, fake, height, alpha):
        fake_out = self.dis(fake, height, alpha)
        real_out = self.dis(real, height, alpha)
        loss = fake_out.mean() - real_out.mean() + self.drift * (real_out ** 2).mean()
        if self.use_gp:
            loss = loss + self._gradient_penalty(real, fake, height, alpha)
        return loss


def train_dis(gan, gen, dis_optim, loader, latent=512, height=4, alpha=1.0):
    for images in loader:
        images = images.cuda()
        noise = torch.randn(images.shape[0], latent, device=images.device)
        fake = gen(noise, height, alpha).detach()
        loss = gan.dis_loss(images, fake, height, alpha)
        dis_optim.zero_grad()
        loss.backward()
        dis_optim.step()
