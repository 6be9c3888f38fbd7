# Source: https://github.com/davda54/sam/blob/020e2ead7aed5e0313b9c344f20afec9b1ea5a92/example/train.py
# Report: correct code: SAM training loop whose Log object accumulates per-epoch loss/accuracy (example/utility/log.py)
# Shape: the per-sample loss is handed to log(...) as loss.cpu() inside torch.no_grad(), and Log._train_step reduces it with .sum().item() before adding it to its dicts
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        norm = torch.norm(torch.stack([p.grad.norm(2) for g in self.param_groups for p in g["params"] if p.grad is not None]), 2)
        for group in self.param_groups:
            scale = group["rho"] / (norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                p.add_(p.grad * scale.to(p))
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


def smooth_crossentropy(pred, gold, smoothing=0.1):
    n_class = pred.size(1)
    one_hot = torch.full_like(pred, fill_value=smoothing / (n_class - 1))
    one_hot.scatter_(dim=1, index=gold.unsqueeze(1), value=1.0 - smoothing)
    return F.kl_div(F.log_softmax(pred, dim=1), one_hot, reduction="none").sum(-1)


class Log:
    def __init__(self, log_each):
        self.log_each = log_each
        self.epoch = -1
        self.is_train = True

    def train(self, len_dataset):
        self.epoch += 1
        self.is_train = True
        self.last_steps_state = {"loss": 0.0, "accuracy": 0.0, "steps": 0}
        self._reset(len_dataset)

    def eval(self, len_dataset):
        self.flush()
        self.is_train = False
        self._reset(len_dataset)

    def __call__(self, model, loss, accuracy, learning_rate=None):
        if self.is_train:
            self._train_step(loss, accuracy, learning_rate)
        else:
            self._eval_step(loss, accuracy)

    def _train_step(self, loss, accuracy, learning_rate):
        self.learning_rate = learning_rate
        self.last_steps_state["loss"] += loss.sum().item()
        self.last_steps_state["accuracy"] += accuracy.sum().item()
        self.last_steps_state["steps"] += loss.size(0)
        self.epoch_state["loss"] += loss.sum().item()
        self.epoch_state["accuracy"] += accuracy.sum().item()
        self.epoch_state["steps"] += loss.size(0)
        self.step += 1
        if self.step % self.log_each == self.log_each - 1:
            avg = self.last_steps_state["loss"] / self.last_steps_state["steps"]
            print(f"\r|{self.epoch:6d} | {avg:10.4f} | lr {learning_rate:.3e}", end="")
            self.last_steps_state = {"loss": 0.0, "accuracy": 0.0, "steps": 0}

    def _eval_step(self, loss, accuracy):
        self.epoch_state["loss"] += loss.sum().item()
        self.epoch_state["accuracy"] += accuracy.sum().item()
        self.epoch_state["steps"] += loss.size(0)

    def flush(self):
        loss = self.epoch_state["loss"] / max(self.epoch_state["steps"], 1)
        acc = self.epoch_state["accuracy"] / max(self.epoch_state["steps"], 1)
        print(f"\n epoch {self.epoch} loss {loss:.4f} acc {100 * acc:.2f}% ({time.time() - self.start_time:.0f}s)")

    def _reset(self, len_dataset):
        self.start_time = time.time()
        self.step = 0
        self.len_dataset = len_dataset
        self.epoch_state = {"loss": 0.0, "accuracy": 0.0, "steps": 0}


def run(model, train_loader, test_loader, epochs, device, lr=0.1):
    log = Log(log_each=10)
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=2.0, lr=lr, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        log.train(len_dataset=len(train_loader.dataset))
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)

            predictions = model(inputs)
            loss = smooth_crossentropy(predictions, targets)
            loss.mean().backward()
            optimizer.first_step(zero_grad=True)

            smooth_crossentropy(model(inputs), targets).mean().backward()
            optimizer.second_step(zero_grad=True)

            with torch.no_grad():
                correct = torch.argmax(predictions.data, 1) == targets
                log(model, loss.cpu(), correct.cpu(), lr)

        model.eval()
        log.eval(len_dataset=len(test_loader.dataset))
        with torch.no_grad():
            for inputs, targets in test_loader:
                inputs, targets = inputs.to(device), targets.to(device)
                predictions = model(inputs)
                loss = smooth_crossentropy(predictions, targets)
                correct = torch.argmax(predictions, 1) == targets
                log(model, loss.cpu(), correct.cpu())
    log.flush()
