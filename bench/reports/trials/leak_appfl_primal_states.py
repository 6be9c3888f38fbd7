# Source: https://github.com/APPFL/APPFL/issues/112
# Report: With many FEMNIST clients the APPFL server hit CUDA OOM while recovering primal states, because each client's model state was deep-copied and kept in GPU memory; moving those states to CPU fixed the clients.
# Shape: The server keeps a deepcopy of every client's GPU state dict in a dict keyed by client id, so GPU memory scales with the number of clients seen.
# Expect: TML004 line 18
import copy
import torch


class FedServer:
    def __init__(self, model, num_clients, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.num_clients = num_clients
        self.primal_states = {}

    def primal_recover_from_local_states(self, local_states):
        for sid, states in local_states.items():
            self.primal_states[sid] = copy.deepcopy(states["primal"])  # expect: TML004

    def update(self, local_states):
        self.primal_recover_from_local_states(local_states)
        global_state = copy.deepcopy(self.model.state_dict())
        for name in global_state:
            stacked = torch.stack([self.primal_states[sid][name].float()
                                   for sid in self.primal_states])
            global_state[name] = stacked.mean(0).to(global_state[name].dtype)
        self.model.load_state_dict(global_state)


def client_update(model, loader, device="cuda"):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"primal": model.state_dict()}


def run(server, client_models, loaders, rounds=50):
    for _ in range(rounds):
        local_states = {}
        for sid, (m, dl) in enumerate(zip(client_models, loaders)):
            m.load_state_dict(server.model.state_dict())
            local_states[sid] = client_update(m, dl)
        server.update(local_states)
