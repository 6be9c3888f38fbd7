# Source: https://github.com/andrewliao11/unrolled-gans/blob/06f2a1aa1c86f7685649bec4ab46f2032d4f7a70/unrolled_gan.ipynb
# Report: audited pattern (discussed in issues #1 and #2 of the repository): d_unrolled_loop calls d_loss.backward(create_graph=True) and then d_optimizer.step(), so every D parameter's .grad carries a double-backward graph that points back at the parameter; nothing sets p.grad = None afterwards, and the loop runs unrolled_steps times per generator step
# Shape: the create_graph backward sits in a helper called from the unrolling loop inside g_loop; grads are only cleared by the next zero_grad, never set to None after the step
# Expect: TML013 line 60
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

z_dim, g_hid, d_hid, data_dim = 256, 128, 128, 2
minibatch_size = 512
unrolled_steps = 10


class Generator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = torch.tanh(self.map1(x))
        x = torch.tanh(self.map2(x))
        return self.map3(x)


class Discriminator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = torch.tanh(self.map1(x))
        x = torch.tanh(self.map2(x))
        return torch.sigmoid(self.map3(x))


G = Generator(z_dim, g_hid, data_dim).cuda()
D = Discriminator(data_dim, d_hid, 1).cuda()
criterion = nn.BCELoss()
d_optimizer = optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.999))
g_optimizer = optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))


def d_unrolled_loop(dset, d_gen_input):
    d_optimizer.zero_grad()
    d_real_data = torch.from_numpy(dset.sample(minibatch_size)).cuda()
    d_real_decision = D(d_real_data)
    d_real_error = criterion(d_real_decision, torch.ones_like(d_real_decision))
    with torch.no_grad():
        d_fake_data = G(d_gen_input)
    d_fake_decision = D(d_fake_data)
    d_fake_error = criterion(d_fake_decision, torch.zeros_like(d_fake_decision))
    d_loss = d_real_error + d_fake_error
    d_loss.backward(create_graph=True)  # expect: TML013
    d_optimizer.step()
    return d_real_error.cpu().item(), d_fake_error.cpu().item()


def g_loop(dset):
    g_optimizer.zero_grad()
    gen_input = torch.from_numpy(np.random.normal(size=[minibatch_size, z_dim]).astype('float32')).cuda()
    if unrolled_steps > 0:
        backup = copy.deepcopy(D)
        for i in range(unrolled_steps):
            d_unrolled_loop(dset, d_gen_input=gen_input)
    g_fake_data = G(gen_input)
    dg_fake_decision = D(g_fake_data)
    g_error = criterion(dg_fake_decision, torch.ones_like(dg_fake_decision))
    g_error.backward()
    g_optimizer.step()
    if unrolled_steps > 0:
        D.load_state_dict(backup.state_dict())
        del backup
    return g_error.cpu().item()


def train(dset, num_iterations=3000):
    for it in range(num_iterations):
        g_info = g_loop(dset)
        if it % 100 == 0:
            print(it, g_info)
