# Source: https://discuss.pytorch.org/t/how-to-free-graph-manually/9255/2
# Report: user ran backward(retain_graph=True) and asked how to free the graph; answer: the retained buffers live as long as the output is reachable from Python, so a kept output keeps its whole graph
# Shape: a trainer keeps every step's output in a dict on self for a later sensitivity probe while backward retains the graph, so each step's saved activations stay alive
# Expect: TML006 line 35; TML001 line 36
import torch
import torch.nn as nn


class ProbeTrainer:
    def __init__(self, model, lr=1e-3, probe_every=50, device="cuda"):
        self.model = model.to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.criterion = nn.CrossEntropyLoss()
        self.probe_every = probe_every
        self.device = device
        self.saved_outputs = {}
        self.step = 0

    def probe(self, output):
        # second backward through the same graph: how much do logits move the first layer?
        first = next(self.model.parameters())
        g, = torch.autograd.grad(output.logsumexp(dim=1).mean(), first)
        return g.norm().item()

    def train_epoch(self, loader):
        self.model.train()
        probes = []
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            output = self.model(x)
            loss = self.criterion(output, y)

            self.opt.zero_grad()
            # keep the buffers so that probe() can go through the graph again later
            loss.backward(retain_graph=True)  # expect: TML006
            self.saved_outputs[self.step] = output  # expect: TML001
            if self.step % self.probe_every == 0:
                probes.append(self.probe(output))
            self.opt.step()
            self.step += 1
        return probes

    def sensitivity_report(self):
        return {k: v.detach().float().std().item() for k, v in self.saved_outputs.items()}
