# Source: https://github.com/baitutanglj/PoLo/blob/b83f07954d6145dbdc633b81f33502598372fb61/mycode_one_answer/model/trainer.py
# Report: audit of Trainer.train(): the smoothed training loss EMA over the graph-attached REINFORCE loss was never detached; this variant takes .item() of the batch loss before it enters the EMA
# Shape: same trainer; the EMA is rebuilt from a Python float each step, and the reward-baseline EMA (built from numpy rewards, no graph) is kept as in the repo
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch

logger = logging.getLogger(__name__)


class ReactiveBaseline:
    def __init__(self, lam):
        self.lam = lam
        self.b = torch.tensor(0.0)

    def value(self):
        return self.b

    def update(self, target):
        self.b = (1 - self.lam) * self.b + self.lam * target


class PathTrainer:
    def __init__(self, agent, env, cfg, device="cuda"):
        self.agent = agent.to(device)
        self.env = env
        self.cfg = cfg
        self.device = device
        self.baseline = ReactiveBaseline(cfg["lambda"])
        self.optimizer = torch.optim.Adam(self.agent.parameters(), lr=cfg["lr"])

    def discounted_returns(self, rewards, path_length, gamma):
        returns = torch.zeros(rewards.shape[0], path_length, device=self.device)
        running = torch.zeros(rewards.shape[0], device=self.device)
        returns[:, -1] = rewards
        for t in reversed(range(path_length)):
            running = gamma * running + returns[:, t]
            returns[:, t] = running
        return returns

    def reinforce_loss(self, step_losses, step_logits, returns):
        losses = torch.stack(step_losses, dim=1)
        adv = returns - self.baseline.value().to(self.device)
        adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-6)
        logits = torch.stack(step_logits, dim=2)
        entropy = -torch.mean(torch.mean(torch.exp(logits) * logits, dim=1))
        return torch.mean(losses * adv) - self.cfg["beta"] * entropy

    def train(self):
        train_loss = 0.0
        for step, episode in enumerate(self.env.episodes(), start=1):
            self.agent.train()
            step_losses, step_logits = self.agent(episode, self.cfg["path_length"])
            rewards = episode.rewards()
            returns = self.discounted_returns(torch.from_numpy(rewards).to(self.device), self.cfg["path_length"], self.cfg["gamma"])
            batch_loss = self.reinforce_loss(step_losses, step_logits, returns)
            self.baseline.update(torch.mean(returns))
            self.optimizer.zero_grad()
            batch_loss.backward()
            self.optimizer.step()
            train_loss = 0.98 * train_loss + 0.02 * batch_loss.item()
            if np.isnan(train_loss):
                raise ArithmeticError("loss became NaN")
            logger.info("step %d hits %d smoothed loss %.4f", step, int(np.sum(rewards > 0)), train_loss)
            if step >= self.cfg["total_iterations"]:
                break
