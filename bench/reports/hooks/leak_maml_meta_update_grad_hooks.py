# Source: https://github.com/katerakelly/pytorch-maml/blob/75907aca148ad053dfaf75fc138319f0d89534a8/src/maml.py
# Report: audit of meta_update(): it registers a register_hook closure on every parameter of the persistent meta-net each meta-iteration to swap in the summed task meta-gradients; the repo removes every handle after opt.step(); the variant it avoided never removes them
# Shape: meta-learner object; per meta-iteration a dummy forward/backward is hijacked by per-parameter hooks whose closures hold that iteration's summed gradient dict, and the handles are dropped, so hooks and their gradient tensors pile up
# Expect: TML007 line 58
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class FewShotNet(nn.Module):
    def __init__(self, n_way, channels=64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, channels, 3, 2), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, 2), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(channels, n_way)

    def forward(self, x):
        return self.head(self.body(x))


class MetaLearner:
    def __init__(self, n_way, inner_lr=0.4, meta_lr=1e-3, inner_steps=3, device="cuda"):
        self.device = device
        self.net = FewShotNet(n_way).to(device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=meta_lr)
        self.inner_lr, self.inner_steps = inner_lr, inner_steps

    def adapt_and_grad(self, task, meta_batch):
        (xs, ys), (xq, yq) = [(x.to(self.device), y.to(self.device)) for x, y in task]
        fast = OrderedDict(self.net.named_parameters())
        for _ in range(self.inner_steps):
            loss = F.cross_entropy(functional_call(self.net, fast, (xs,)), ys)
            grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
            fast = OrderedDict((n, w - self.inner_lr * g) for (n, w), g in zip(fast.items(), grads))
        q_logits = functional_call(self.net, fast, (xq,))
        q_loss = F.cross_entropy(q_logits, yq) / meta_batch
        meta_grads = torch.autograd.grad(q_loss, list(self.net.parameters()))
        acc = (q_logits.argmax(1) == yq).float().mean().item()
        return {n: g for (n, _), g in zip(self.net.named_parameters(), meta_grads)}, q_loss.item(), acc

    def meta_update(self, task, grad_dicts):
        (xs, ys), _ = [(x.to(self.device), y.to(self.device)) for x, y in task]
        dummy_loss = F.cross_entropy(self.net(xs), ys)
        summed = {k: sum(d[k] for d in grad_dicts) for k in grad_dicts[0]}

        def make_hook(key):
            def swap_grad(grad):
                return summed[key]
            return swap_grad

        for name, param in self.net.named_parameters():
            param.register_hook(make_hook(name))  # expect: TML007
        self.opt.zero_grad()
        dummy_loss.backward()
        self.opt.step()

    def train(self, sample_task, meta_iters=20000, meta_batch=8, log_every=100):
        history = []
        for it in range(meta_iters):
            grad_dicts, q_losses, accs = [], [], []
            for _ in range(meta_batch):
                task = sample_task()
                g, q_loss, acc = self.adapt_and_grad(task, meta_batch)
                grad_dicts.append(g)
                q_losses.append(q_loss)
                accs.append(acc)
            self.meta_update(task, grad_dicts)
            history.append((sum(q_losses), sum(accs) / meta_batch))
            if it % log_every == 0:
                print(f"meta-iter {it}: query loss {history[-1][0]:.3f} acc {history[-1][1]:.3f}")
        return history
