# Source: https://github.com/mk-minchul/unroll_gan/blob/49f503d4bdc06453e57eec5a96f3e232fd53e170/main.py
# Report: fork linked from andrewliao11/unrolled-gans issue #2 that makes the unrolling real by stepping a functional copy of D (higher's innerloop_ctx / diffopt.step) instead of calling backward(create_graph=True) on the module; written here without higher, spelled out with torch.autograd.grad
# Shape: the unrolled D steps use torch.autograd.grad(..., create_graph=True) and keep the result in local fast weights (chained over the bounded unroll loop and consumed by g_error.backward() in the same call, MAML-style); no gradient is ever written into p.grad with create_graph
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.func import functional_call

z_dim, g_hid, d_hid, data_dim = 256, 128, 128, 2
minibatch_size = 512
unrolled_steps = 10
d_learning_rate = 1e-4


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


G = nn.Sequential(nn.Linear(z_dim, g_hid), nn.Tanh(), nn.Linear(g_hid, data_dim)).cuda()
D = Discriminator(data_dim, d_hid, 1).cuda()
criterion = nn.BCELoss()
g_optimizer = optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))


def d_unrolled_step(dset, fast_weights, g_fake_data):
    d_real_data = torch.from_numpy(dset.sample(minibatch_size)).cuda()
    d_real_decision = functional_call(D, fast_weights, (d_real_data,))
    d_real_error = criterion(d_real_decision, torch.ones_like(d_real_decision))
    d_fake_decision = functional_call(D, fast_weights, (g_fake_data,))
    d_fake_error = criterion(d_fake_decision, torch.zeros_like(d_fake_decision))
    d_loss = d_real_error + d_fake_error
    names = list(fast_weights.keys())
    grads = torch.autograd.grad(d_loss, [fast_weights[n] for n in names], create_graph=True)
    return {n: fast_weights[n] - d_learning_rate * g for n, g in zip(names, grads)}


def g_loop(dset):
    g_optimizer.zero_grad()
    gen_input = torch.from_numpy(np.random.normal(size=[minibatch_size, z_dim]).astype('float32')).cuda()
    g_fake_data = G(gen_input)
    fast_weights = dict(D.named_parameters())
    for i in range(unrolled_steps):
        fast_weights = d_unrolled_step(dset, fast_weights, g_fake_data)
    dg_fake_decision = functional_call(D, fast_weights, (g_fake_data,))
    g_error = criterion(dg_fake_decision, torch.ones_like(dg_fake_decision))
    g_error.backward(inputs=list(G.parameters()))
    g_optimizer.step()
    return g_error.item()


def train(dset, num_iterations=3000):
    for it in range(num_iterations):
        g_info = g_loop(dset)
        if it % 100 == 0:
            print(it, g_info)
