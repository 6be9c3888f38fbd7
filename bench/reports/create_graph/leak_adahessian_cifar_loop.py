# Source: https://github.com/davda54/ada-hessian/blob/32e1d3cc85599313eda11fb12249aa8a37e081b6/example/train.py
# Report: audit of the AdaHessian CIFAR example: backward(create_graph=True) leaves every parameter's .grad holding the double-backward graph (a param/grad reference cycle) after optimizer.step(); grads are only zeroed at the top of the next step, so the last batch's graph survives into evaluation and past training
# Shape: plain epoch loop with a small logger; zero_grad at the start of the step, backward with create_graph for the Hessian-trace optimizer, step, no reset of .grad afterwards; eval under no_grad
# Expect: TML013 line 50
import torch
import torch.nn.functional as F

from ada_hessian import AdaHessian
from model.wide_res_net import WideResNet


class Log:
    def __init__(self, log_each=10):
        self.log_each = log_each
        self.reset()

    def reset(self):
        self.loss, self.correct, self.count, self.steps = 0.0, 0, 0, 0

    def __call__(self, loss, correct, lr=None):
        self.loss += loss
        self.correct += correct
        self.count += 1
        self.steps += 1
        if lr is not None and self.steps % self.log_each == 0:
            print(f"step {self.steps}: loss {self.loss / self.count:.4f} lr {lr:.5f}")

    def summary(self, name, n):
        print(f"{name}: loss {self.loss / max(self.count, 1):.4f} acc {self.correct / n:.4f}")
        self.reset()


def smooth_crossentropy(logits, target, smoothing=0.1):
    log_prob = F.log_softmax(logits, dim=1)
    nll = -log_prob.gather(1, target.unsqueeze(1)).squeeze(1)
    return (1 - smoothing) * nll - smoothing * log_prob.mean(dim=1)


def main(dataset, epochs=200, lr=0.15, weight_decay=5e-4, device="cuda"):
    model = WideResNet(16, 8, 0.0, in_channels=3, labels=10).to(device)
    optimizer = AdaHessian(model.parameters(), lr=lr, weight_decay=weight_decay, update_each=1)
    log = Log(log_each=10)
    for epoch in range(epochs):
        model.train()
        for inputs, labels in dataset.train:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = smooth_crossentropy(outputs, labels)
            loss.mean().backward(create_graph=True)  # expect: TML013
            optimizer.step()
            with torch.no_grad():
                correct = (outputs.argmax(1) == labels).sum().item()
                log(loss.mean().item(), correct, optimizer.param_groups[0]["lr"])
        log.summary("train", len(dataset.train.dataset))

        model.eval()
        with torch.no_grad():
            for inputs, labels in dataset.test:
                inputs, labels = inputs.to(device), labels.to(device)
                outputs = model(inputs)
                loss = smooth_crossentropy(outputs, labels)
                log(loss.mean().item(), (outputs.argmax(1) == labels).sum().item())
        log.summary("test", len(dataset.test.dataset))
