# Source: https://github.com/pytorch/ignite/pull/943
# Report: RunningAverage over the process function's output misbehaved when that output was a torch tensor, a bug the PR says can cause a memory leak; the PR fixed the tensor case.
# Shape: the same exponential average on self, but update() detaches (and clones) a tensor output before it is stored, so the running value carried between iterations has no graph.
# Expect: near-miss: must be silent
import torch


class RunningAverage:
    def __init__(self, output_transform, alpha=0.98):
        self._output_transform = output_transform
        self.alpha = alpha
        self.src = None
        self._value = None

    def reset(self):
        self._value = None

    def update(self, output):
        if isinstance(output, torch.Tensor):
            output = output.detach().clone()
        self.src = output

    def compute(self):
        if self._value is None:
            self._value = self.src
        else:
            self._value = self._value * self.alpha + (1.0 - self.alpha) * self.src
        return self._value

    def iteration_completed(self, engine, name):
        self.update(self._output_transform(engine.state.output))
        engine.state.metrics[name] = self.compute()


def make_trainer_step(model, optimizer, loss_fn, device):
    def _update(engine, batch):
        model.train()
        optimizer.zero_grad()
        x, y = (t.to(device) for t in batch)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return _update
