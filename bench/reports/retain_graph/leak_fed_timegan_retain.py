# Source: https://github.com/soizhiwen/FedAvg-TimeGAN/blob/00301af73f038c5a2cf10ddb13b17cec73d1b3de/Models/timegan/timegan.py
# Report: audit of the TimeGAN model class trained on each federated client: every backward_* method calls err.backward(retain_graph=True) although each optimize_params_* step recomputes its forward, while the forwards store H, X_tilde, H_supervise and the errors on self between steps
# Shape: forward_* methods keep latents and reconstructions on self, backward_* methods keep the losses on self and backprop with retain_graph=True as the only backward of each training iteration
# Expect: TML006 line 42; TML006 line 46; TML006 line 52
import torch
import torch.nn as nn
import torch.optim as optim


def cycle(dl):
    while True:
        for data in dl:
            yield data


class TimeGAN:
    def __init__(self, nete, netr, nets, dataloader, n_iters, lr=1e-3, device="cuda"):
        self.device = device
        self.nete, self.netr, self.nets = nete.to(device), netr.to(device), nets.to(device)
        self.dl = cycle(dataloader)
        self.train_num_steps = n_iters
        self.l_mse = nn.MSELoss()
        self.optimizer_e = optim.Adam(self.nete.parameters(), lr=lr)
        self.optimizer_r = optim.Adam(self.netr.parameters(), lr=lr)
        self.optimizer_s = optim.Adam(self.nets.parameters(), lr=lr)

    def _next_batch(self):
        self.X = next(self.dl).to(self.device)

    def forward_e(self):
        self.H = self.nete(self.X)

    def forward_er(self):
        self.H = self.nete(self.X)
        self.X_tilde = self.netr(self.H)

    def forward_s(self):
        self.H_supervise = self.nets(self.H)

    def backward_er(self):
        self.err_er = self.l_mse(self.X_tilde, self.X)
        self.err_er.backward(retain_graph=True)  # expect: TML006

    def backward_s(self):
        self.err_s = self.l_mse(self.H_supervise[:, :-1, :], self.H[:, 1:, :])
        self.err_s.backward(retain_graph=True)  # expect: TML006

    def backward_er_(self):
        self.err_er_ = self.l_mse(self.X_tilde, self.X)
        self.err_s = self.l_mse(self.H_supervise[:, :-1, :], self.H[:, 1:, :])
        self.err_er = 10 * torch.sqrt(self.err_er_) + 0.1 * self.err_s
        self.err_er.backward(retain_graph=True)  # expect: TML006

    def optimize_params_er(self):
        self.forward_er()
        self.optimizer_e.zero_grad()
        self.optimizer_r.zero_grad()
        self.backward_er()
        self.optimizer_e.step()
        self.optimizer_r.step()

    def optimize_params_s(self):
        self.forward_e()
        self.forward_s()
        self.optimizer_s.zero_grad()
        self.backward_s()
        self.optimizer_s.step()

    def optimize_params_er_(self):
        self.forward_er()
        self.forward_s()
        self.optimizer_e.zero_grad()
        self.optimizer_r.zero_grad()
        self.backward_er_()
        self.optimizer_e.step()
        self.optimizer_r.step()

    def train(self):
        for net in (self.nete, self.netr, self.nets):
            net.train()
        for _ in range(self.train_num_steps):
            self._next_batch()
            self.optimize_params_er()
        for _ in range(self.train_num_steps):
            self._next_batch()
            self.optimize_params_s()
        for _ in range(self.train_num_steps):
            self._next_batch()
            self.optimize_params_er_()
        return float(self.err_er)
