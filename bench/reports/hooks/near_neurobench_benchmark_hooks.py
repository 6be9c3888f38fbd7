# Source: https://github.com/NeuroBench/neurobench/issues/184
# Report: Benchmark(...) built inside the per-epoch test() registered activation hooks that were never removed; the fix (commit de4ad19) saves the handles and removes them at the end of the run
# Shape: fixed version: the recorder keeps its handle and EvalHarness.run removes every hook in a finally block before returning
# Expect: near-miss: must be silent
import torch
import torch.nn as nn

ACTIVATION_TYPES = (nn.ReLU, nn.GELU, nn.Sigmoid)


class ActivationRecorder:
    """Records every output of one activation layer (used for sparsity metrics)."""

    def __init__(self, layer):
        self.layer = layer
        self.outputs = []
        self.handle = layer.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.outputs.append(output)

    def reset(self):
        self.outputs = []

    def close(self):
        self.handle.remove()
        self.outputs = []


class EvalHarness:
    def __init__(self, model, dataloader, metrics):
        self.model = model
        self.dataloader = dataloader
        self.metrics = metrics
        self.recorders = [
            ActivationRecorder(m) for m in model.modules() if isinstance(m, ACTIVATION_TYPES)
        ]

    @torch.no_grad()
    def run(self, device):
        self.model.eval()
        scores = {name: 0.0 for name in self.metrics}
        try:
            for data, target in self.dataloader:
                data, target = data.to(device), target.to(device)
                preds = self.model(data)
                for name, fn in self.metrics.items():
                    scores[name] += float(fn(preds, target, self.recorders))
                for rec in self.recorders:
                    rec.reset()
        finally:
            for rec in self.recorders:
                rec.close()
        return {k: v / len(self.dataloader) for k, v in scores.items()}


def test(model, loader, metrics, device):
    harness = EvalHarness(model, loader, metrics)
    return harness.run(device)


def pretrain(model, train_loader, val_loader, metrics, epochs, device):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        results = test(model, val_loader, metrics, device)
        print(f"epoch {epoch}: {results}")
