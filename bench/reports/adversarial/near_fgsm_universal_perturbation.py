# Source: https://github.com/1Konny/FGSM/blob/0a14e7740e85172d9ca0f65a97b18cf5df59919b/adversary.py
# Report: audited idiom: Attack.universal() optimises one perturbation r over every test batch and re-wraps it as a fresh leaf (Variable(r.data, requires_grad=True)) after each step
# Shape: same self.r update, but the step is followed by .detach().requires_grad_(True) (the modern form of re-wrapping r.data as a new leaf), so no chain across batches
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F

from models.toynet import ToyNet
from datasets.datasets import return_data
from utils.utils import cuda


class Attack(object):
    def __init__(self, args):
        self.cuda = args.cuda and torch.cuda.is_available()
        self.eps = 1e-8
        self.step_size = 1e-1
        self.net = cuda(ToyNet(y_dim=10), self.cuda)
        self.data_loader = return_data(args)
        self.r = None

    def set_mode(self, mode="train"):
        if mode == "train":
            self.net.train()
        else:
            self.net.eval()

    def universal_cost(self, x):
        logit = self.net(x + self.r)
        p_ygx = F.softmax(logit, dim=1)
        entropy = (-p_ygx * torch.log(self.eps + p_ygx)).sum(1).mean(0)
        perceptual = -F.mse_loss(x + self.r, x) - F.relu(self.r.norm() - 5)
        return logit, entropy + perceptual

    def universal(self, n_epochs=100):
        self.set_mode("eval")
        for p in self.net.parameters():
            p.requires_grad_(False)
        for e in range(n_epochs):
            for batch_idx, (images, labels) in enumerate(self.data_loader["test"]):
                x = cuda(images, self.cuda)
                y = cuda(labels, self.cuda)
                if self.r is None:
                    self.r = torch.zeros(x.size()[1:], device=x.device, requires_grad=True)
                logit, cost = self.universal_cost(x)
                grad, = torch.autograd.grad(cost, self.r)
                self.r = (self.r + self.step_size * grad).detach().requires_grad_(True)
                correct = (logit.argmax(1) == y).float().mean().item()
                if batch_idx % 100 == 0:
                    print(e, batch_idx, correct * 100, cost.item(), self.r.norm().item())
        self.set_mode("train")
        return self.r
