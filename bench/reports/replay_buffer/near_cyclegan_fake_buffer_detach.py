# Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/71
# Report: In the CycleGAN example the generator output is pushed into the 50-image history buffer before detach(), so the buffer keeps generator graphs alive; the issue asks to detach before push_and_pop.
# Shape: Variant proposed in the issue: fake_A.detach() is what enters the history buffer, so the stored images carry no graph.
# Expect: near-miss: must be silent
import random
import torch


class ReplayBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, batch):
        out = []
        for element in batch:
            element = element.unsqueeze(0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                out.append(element)
            elif random.uniform(0, 1) > 0.5:
                i = random.randint(0, self.max_size - 1)
                out.append(self.data[i].clone())
                self.data[i] = element
            else:
                out.append(element)
        return torch.cat(out)


def train(G_AB, G_BA, D_A, loader, opt_G, opt_DA, criterion_GAN, valid, fake):
    fake_A_buffer = ReplayBuffer()
    for real_A, real_B in loader:
        real_A, real_B = real_A.cuda(), real_B.cuda()
        opt_G.zero_grad()
        fake_A = G_BA(real_B)
        loss_G = criterion_GAN(D_A(fake_A), valid)
        loss_G.backward()
        opt_G.step()

        opt_DA.zero_grad()
        fake_A_ = fake_A_buffer.push_and_pop(fake_A.detach())
        loss_real = criterion_GAN(D_A(real_A), valid)
        loss_fake = criterion_GAN(D_A(fake_A_), fake)
        ((loss_real + loss_fake) / 2).backward()
        opt_DA.step()
