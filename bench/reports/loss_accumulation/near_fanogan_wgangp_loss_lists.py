# Source: https://github.com/mulkong/f-AnoGAN_with_Pytorch/issues/3
# Report: GPU memory kept growing while training the f-AnoGAN WGAN-GP stage in f_AnoGAN_MNIST(AE).ipynb; the author fixed it by appending d_loss.item() and g_loss.item() instead of the loss tensors
# Shape: no longer kept: the same history lists now receive Python floats; the gradient penalty still uses autograd.grad(create_graph=True), whose result is folded into d_loss and backpropagated the same step (correct idiom, not stored in .grad)
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.autograd as autograd
import matplotlib.pyplot as plt

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor

latent_dim = 100
img_shape = (1, 28, 28)
lambda_gp = 10
n_critic = 5


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(latent_dim, 256), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(256, 512), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(512, int(np.prod(img_shape))), nn.Tanh())

    def forward(self, z):
        return self.model(z).view(z.size(0), *img_shape)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(int(np.prod(img_shape)), 512), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(512, 256), nn.LeakyReLU(0.2, inplace=True))
        self.last_layer = nn.Linear(256, 1)

    def forward(self, img):
        return self.last_layer(self.features(img.view(img.size(0), -1)))


def compute_gradient_penalty(D, real_samples, fake_samples):
    alpha = Tensor(np.random.random((real_samples.size(0), 1, 1, 1)))
    interpolates = (alpha * real_samples + (1 - alpha) * fake_samples).requires_grad_(True)
    d_interpolates = D(interpolates)
    fake = torch.ones(real_samples.size(0), 1, device=device)
    gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates,
                              grad_outputs=fake, create_graph=True,
                              retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train_wgangp(generator, discriminator, dataloader, n_epochs=200):
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

    d_losses = []
    g_losses = []
    batches_done = 0
    for epoch in range(n_epochs):
        for i, (imgs, _) in enumerate(dataloader):
            real_imgs = imgs.to(device)

            # ---------------------
            #  Train Discriminator
            # ---------------------
            optimizer_D.zero_grad()
            z = torch.randn(imgs.size(0), latent_dim, device=device)
            fake_imgs = generator(z)

            real_validity = discriminator(real_imgs)
            fake_validity = discriminator(fake_imgs.detach())
            gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
            d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty

            d_loss.backward()
            optimizer_D.step()
            d_losses.append(d_loss.item())

            optimizer_G.zero_grad()

            # Train the generator every n_critic steps
            if i % n_critic == 0:
                fake_imgs = generator(z)
                fake_validity = discriminator(fake_imgs)
                g_loss = -torch.mean(fake_validity)

                g_loss.backward()
                optimizer_G.step()
                g_losses.append(g_loss.item())

                print("[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]"
                      % (epoch, n_epochs, i, len(dataloader), d_loss.item(), g_loss.item()))
                batches_done += n_critic

    torch.save(generator.state_dict(), "generator.pt")
    torch.save(discriminator.state_dict(), "discriminator.pt")
    return d_losses, g_losses


def plot_losses(d_losses, g_losses):
    plt.figure(figsize=(10, 5))
    plt.plot(d_losses, label="D")
    plt.plot(g_losses, label="G")
    plt.legend()
    plt.savefig("wgangp_losses.png")
