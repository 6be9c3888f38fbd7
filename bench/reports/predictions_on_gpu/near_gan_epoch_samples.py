# Source: https://github.com/udacity/deep-learning-v2-pytorch/pull/106
# Report: face-generation DCGAN: CUDA memory rose at the end of each epoch because G(fixed_z) samples were generated without no_grad and appended, graph and all, to a list kept for the whole run
# Shape: fixed as in the PR: samples generated under no_grad and moved to the CPU before being appended
# Expect: near-miss: must be silent
import torch
import numpy as np


def train(D, G, d_optimizer, g_optimizer, train_loader, real_loss, fake_loss,
          n_epochs: int, z_size: int = 100, print_every: int = 50):
    D.cuda()
    G.cuda()
    samples = []
    losses = []
    fixed_z = np.random.uniform(-1, 1, size=(16, z_size))
    fixed_z = torch.from_numpy(fixed_z).float().cuda()

    for epoch in range(n_epochs):
        for batch_i, (real_images, _) in enumerate(train_loader):
            real_images = (real_images * 2 - 1).cuda()

            d_optimizer.zero_grad()
            z = torch.from_numpy(np.random.uniform(-1, 1, size=(real_images.size(0), z_size))).float().cuda()
            fake_images = G(z)
            d_loss = real_loss(D(real_images)) + fake_loss(D(fake_images.detach()))
            d_loss.backward()
            d_optimizer.step()

            g_optimizer.zero_grad()
            g_loss = real_loss(D(fake_images))
            g_loss.backward()
            g_optimizer.step()

            if batch_i % print_every == 0:
                losses.append((d_loss.item(), g_loss.item()))

        G.eval()
        with torch.no_grad():
            samples_z = G(fixed_z)
            samples_z = samples_z.detach().cpu()
            samples.append(samples_z)
        G.train()

    return losses, samples
