# Source: https://github.com/cookie519/RL-project/blob/f30fe9cb1c9531a30fbe2192171ed4a04b548679/train_policy.py
# Report: SRPO policy training where the update method returns the loss tensor instead of loss.item(); the epoch loop sums 10000 of them into avg_loss
# Shape: update_policy() returns the graph-attached loss; avg_loss += loss chains every step's loss into one growing autograd history (the logger itself stays clean)
# Expect: TML001 line 59
from collections import defaultdict

import torch
import torch.nn as nn
import tqdm
from torch.utils.tensorboard import SummaryWriter


class CustomLogger:
    def __init__(self, log_dir=None):
        self.writer = SummaryWriter(log_dir=log_dir)
        self.stats = defaultdict(list)

    def log(self, **kwargs):
        for key, val in kwargs.items():
            self.stats[key].append(val)
            self.writer.add_scalar(f"stats/{key}", val, len(self.stats[key]) - 1)


class SRPO(nn.Module):
    def __init__(self, policy, critic, behavior, beta=1.0):
        super().__init__()
        self.policy = policy
        self.critic = critic
        self.behavior = behavior
        self.beta = beta
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def update_policy(self, data):
        s = data["s"]
        a = self.policy(s)
        t = torch.rand(a.shape[0], device=s.device) * 0.96 + 0.02
        z = torch.randn_like(a)
        with torch.no_grad():
            eps = self.behavior(a + z * t[:, None], t, s)
        detach_a = a.detach().requires_grad_(True)
        q = self.critic(detach_a, s).squeeze()
        self.policy.q = torch.mean(q)
        guidance = torch.autograd.grad(torch.sum(q), detach_a)[0].detach()
        loss = ((eps * a).sum(-1) - (guidance * a).sum(-1) * self.beta).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss


def train_policy(args, srpo, data_loader, logger, n_epochs):
    bar = tqdm.trange(n_epochs)
    for epoch in bar:
        avg_loss = 0.0
        num_items = 0
        for _ in range(10000):
            data = data_loader.sample(args.batch_size)
            loss = srpo.update_policy(data)
            avg_loss += loss  # expect: TML001
            num_items += 1
        avg_loss /= num_items
        bar.set_description(f"Average Loss: {avg_loss:.5f}")
        if epoch % 2 == 0:
            logger.log(policy_q=srpo.policy.q.detach().cpu().numpy(),
                       lr=srpo.opt.param_groups[0]["lr"])
