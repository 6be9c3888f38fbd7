# Source: https://github.com/NeuroBench/neurobench/issues/197
# Report: calling test() twice (each call builds a Benchmark that registers activation hooks on the model) made memory jump during the second run until the GPU ran out; the hooks from the first Benchmark were never removed.
# Shape: ActivationProbe.__init__ registers a forward and a pre-forward hook on a layer of the shared model and keeps the handles but never removes them; a new SparsityBenchmark (one probe per layer) is built on every evaluate() call, once per epoch.
# Expect: TML007 line 15; TML007 line 16
import torch
import torch.nn as nn


class ActivationProbe:
    def __init__(self, layer):
        self.layer = layer
        self.inputs = []
        self.outputs = []
        self.is_spiking = hasattr(layer, "threshold")
        self.hook = layer.register_forward_hook(self._post)  # expect: TML007
        self.hook_pre = layer.register_forward_pre_hook(self._pre)  # expect: TML007

    def _pre(self, layer, inputs):
        self.inputs.append(inputs)

    def _post(self, layer, inputs, output):
        self.outputs.append(output[0] if self.is_spiking else output)

    def reset(self):
        self.inputs = []
        self.outputs = []


class SparsityBenchmark:
    def __init__(self, model, dataloader):
        self.model = model
        self.dataloader = dataloader
        self.probes = []
        for layer in model.modules():
            if isinstance(layer, (nn.ReLU, nn.Sigmoid)) or hasattr(layer, "threshold"):
                self.probes.append(ActivationProbe(layer))

    def run(self, device="cuda"):
        correct, total, zeros, elems = 0, 0, 0, 0
        self.model.eval()
        with torch.no_grad():
            for data, target in self.dataloader:
                data, target = data.to(device), target.to(device)
                pred = self.model(data).argmax(dim=1)
                correct += (pred == target).sum().item()
                total += target.numel()
                for probe in self.probes:
                    for out in probe.outputs:
                        zeros += (out == 0).sum().item()
                        elems += out.numel()
                    probe.reset()
        return {"accuracy": correct / total, "activation_sparsity": zeros / max(elems, 1)}


def evaluate(model, loader):
    return SparsityBenchmark(model, loader).run()


def pretrain(model, train_loader, test_loader, optimizer, epochs=50):
    for epoch in range(epochs):
        model.train()
        for data, target in train_loader:
            data, target = data.cuda(), target.cuda()
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, test_loader))
