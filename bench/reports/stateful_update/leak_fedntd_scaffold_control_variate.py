# Source: https://github.com/Lee-Gihun/FedNTD/blob/043269e03cbf32f29e502437b1fa91be53ed7f87/algorithms/scaffold/ClientTrainer.py
# Report: FedNTD's SCAFFOLD client computes the control-variate update c_i+ = c_i - c + (w_server - w_local) / (K * lr) from the flattened model parameters inside a @torch.no_grad() method; this rewrite drops that guard and keeps the flattened weights as torch tensors
# Shape: the client (a deepcopy of the global model each round) returns c_i_plus / c_update built from its live parameters; the server stores c_i_plus per client and folds c_update into self.c_global every round, so the control variates are loop-carried graphs that keep every round's client copy alive
# Expect: TML005 line 82; TML001 line 81
import copy

import torch

from algorithms.scaffold.utils import assign_grads, flatten_grads


def flatten_params(model):
    return torch.cat([p.view(-1) for p in model.parameters()])


class ScaffoldClient:
    def __init__(self, model, criterion, trainloader, local_epochs, lr, device):
        self.model = model
        self.criterion = criterion
        self.trainloader = trainloader
        self.local_epochs = local_epochs
        self.lr = lr
        self.device = device
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.c, self.c_i = 0, 0
        self.step_count = 0

    def download_global(self, server_model, c, c_i):
        self.dg_model = copy.deepcopy(server_model)
        self.model.load_state_dict(server_model.state_dict())
        self.c, self.c_i = c.to(self.device), c_i.to(self.device)

    def train(self):
        self.model.train()
        for _ in range(self.local_epochs):
            for data, targets in self.trainloader:
                self._scaffold_step(data, targets)
        return self._update_control_variate()

    def _scaffold_step(self, data, targets):
        self.optimizer.zero_grad()
        data, targets = data.to(self.device), targets.to(self.device)
        loss = self.criterion(self.model(data), targets)
        loss.backward()
        grad_batch = flatten_grads(self.model).detach().clone()
        self.optimizer.zero_grad()
        grad_batch = grad_batch - self.c_i + self.c
        self.model = assign_grads(self.model, grad_batch)
        self.optimizer.step()
        self.step_count += 1

    def _update_control_variate(self):
        divisor = 1.0 / (self.step_count * self.lr)
        server_params = flatten_params(self.dg_model)
        local_params = flatten_params(self.model)
        param_move = server_params - local_params
        c_i_plus = self.c_i - self.c + divisor * param_move
        c_update_amount = c_i_plus - self.c_i
        return c_i_plus, c_update_amount


class ScaffoldServer:
    def __init__(self, model, client_loaders, criterion, n_rounds, sample_ratio, lr, device):
        self.model = model.to(device)
        self.client_loaders = client_loaders
        self.criterion = criterion
        self.n_rounds, self.sample_ratio, self.lr, self.device = n_rounds, sample_ratio, lr, device
        n_params = flatten_params(self.model).numel()
        self.c_global = torch.zeros(n_params, device=device)
        self.c_locals = {idx: torch.zeros(n_params, device=device) for idx in range(len(client_loaders))}

    def run(self):
        n_clients = len(self.client_loaders)
        for round_idx in range(self.n_rounds):
            sampled = torch.randperm(n_clients)[: max(1, int(self.sample_ratio * n_clients))].tolist()
            for client_idx in sampled:
                client = ScaffoldClient(copy.deepcopy(self.model), self.criterion,
                                        self.client_loaders[client_idx], 1, self.lr, self.device)
                client.download_global(self.model, self.c_global, self.c_locals[client_idx])
                c_i_plus, c_update = client.train()
                self.c_locals[client_idx] = c_i_plus  # expect: TML001
                self.c_global = self.c_global + c_update / n_clients  # expect: TML005
            print(f"round {round_idx}: control norm {self.c_global.norm().item():.4f}")
