# Source: https://github.com/pytorch/ignite/pull/943
# Report: RunningAverage over the process function's output misbehaved when that output was a torch tensor, a bug the PR says can cause a memory leak; the PR fixed the tensor case.
# Shape: an ignite-style RunningAverage attached to a trainer whose step returns the live loss tensor; update() keeps the output on self and compute() folds it into the exponential average stored on self every iteration.
# Expect: TML005 line 31
import torch


class RunningAverage:
    def __init__(self, output_transform, alpha=0.98):
        if not (0.0 < alpha <= 1.0):
            raise ValueError("Argument alpha should be a float between 0.0 and 1.0")
        self._output_transform = output_transform
        self.alpha = alpha
        self.src = None
        self._value = None

    def attach(self, engine, name):
        engine.add_event_handler("EPOCH_STARTED", lambda e: self.reset())
        engine.add_event_handler("ITERATION_COMPLETED", self.iteration_completed, name)

    def reset(self):
        self._value = None

    def update(self, output):
        self.src = output

    def compute(self):
        if self._value is None:
            self._value = self.src
        else:
            self._value = self._value * self.alpha + (1.0 - self.alpha) * self.src  # expect: TML005
        return self._value

    def iteration_completed(self, engine, name):
        self.update(self._output_transform(engine.state.output))
        engine.state.metrics[name] = self.compute()


def make_trainer_step(model, optimizer, loss_fn, device):
    def _update(engine, batch):
        model.train()
        optimizer.zero_grad()
        x, y = (t.to(device) for t in batch)
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        loss.backward()
        optimizer.step()
        return loss, y_pred, y

    return _update


def attach_progress(trainer):
    avg_loss = RunningAverage(output_transform=lambda out: out[0], alpha=0.98)
    avg_loss.attach(trainer, "running_avg_loss")
    return avg_loss
