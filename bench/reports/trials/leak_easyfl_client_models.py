# Source: https://github.com/WwZzz/easyFL/issues/44
# Report: easyFL clients each deepcopy the model, so with a complex model and dozens of clients GPU memory runs out; the maintainer suggests serial training and keeping server-side copies on CPU.
# Shape: Every sampled client stores its own deepcopy of the global model on the GPU as an attribute, and the client objects live for the whole simulation.
# Expect: TML004 line 16
import copy
import torch


class Client:
    def __init__(self, cid, loader):
        self.cid = cid
        self.loader = loader
        self.model = None

    def unpack(self, global_model):
        self.model = copy.deepcopy(global_model)  # expect: TML004
        return self.model

    def train(self, model, lr=0.01, epochs=1):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        model.train()
        for _ in range(epochs):
            for x, y in self.loader:
                x, y = x.cuda(), y.cuda()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return model


class Server:
    def __init__(self, model, clients):
        self.model = model.cuda()
        self.clients = clients

    def iterate(self, sample_size=10):
        selected = torch.randperm(len(self.clients))[:sample_size].tolist()
        states = []
        for cid in selected:
            client = self.clients[cid]
            local = client.train(client.unpack(self.model))
            states.append({k: v.detach().cpu() for k, v in local.state_dict().items()})
        avg = {k: sum(s[k] for s in states) / len(states) for k in states[0]}
        self.model.load_state_dict(avg)

    def run(self, rounds=200):
        for _ in range(rounds):
            self.iterate()
