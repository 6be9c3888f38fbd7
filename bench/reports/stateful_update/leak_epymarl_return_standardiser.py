# Source: https://github.com/uoe-agents/epymarl/blob/main/src/learners/q_learner.py
# Report: epymarl-style QLearner whose target agents/mixer run without no_grad and whose bootstrapped targets lose the .detach() (only td_error detaches them) before the RunningMeanStd return standardiser
# Shape: targets carries the target networks' graph; ret_ms.update folds it into self.mean / self.var (which read their previous values), and the next step's target_max_q reads them again: the chain grows every training step
# Expect: TML005 lines 23, 24
import copy

import torch as th
import torch.nn as nn
from torch.optim import Adam


class RunningMeanStd:
    def __init__(self, shape, device="cpu", epsilon=1e-4):
        self.mean = th.zeros(shape, device=device)
        self.var = th.ones(shape, device=device)
        self.count = epsilon

    def update(self, arr):
        arr = arr.reshape(-1, arr.size(-1))
        batch_mean, batch_var, n = arr.mean(dim=0), arr.var(dim=0), arr.shape[0]
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total  # expect: TML005
        self.var = (self.var * self.count + batch_var * n + delta.pow(2) * self.count * n / total) / total  # expect: TML005
        self.count = total


class QLearner:
    def __init__(self, agent, mixer, args, device):
        self.args = args
        self.agent, self.mixer = agent, mixer
        self.target_agent = copy.deepcopy(agent)
        self.target_mixer = copy.deepcopy(mixer)
        self.params = list(agent.parameters()) + list(mixer.parameters())
        self.optimiser = Adam(self.params, lr=args.lr)
        self.ret_ms = RunningMeanStd(shape=(args.n_agents,), device=device)
        self.steps = 0

    def train(self, batch, t_env):
        rewards, actions = batch["reward"][:, :-1], batch["actions"][:, :-1]
        terminated = batch["terminated"][:, :-1].float()
        q = self.agent(batch["obs"])
        chosen_q = th.gather(q[:, :-1], dim=3, index=actions).squeeze(3)
        target_q = self.target_agent(batch["obs"])[:, 1:]
        target_max_q = target_q.max(dim=3)[0]

        chosen_q = self.mixer(chosen_q, batch["state"][:, :-1])
        target_max_q = self.target_mixer(target_max_q, batch["state"][:, 1:])
        target_max_q = target_max_q * th.sqrt(self.ret_ms.var) + self.ret_ms.mean

        targets = rewards + self.args.gamma * (1 - terminated) * target_max_q
        self.ret_ms.update(targets)
        targets = (targets - self.ret_ms.mean) / th.sqrt(self.ret_ms.var)

        td_error = chosen_q - targets.detach()
        loss = (td_error ** 2).mean()
        self.optimiser.zero_grad()
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.params, self.args.grad_norm_clip)
        self.optimiser.step()

        self.steps += 1
        if self.steps % self.args.target_update_interval == 0:
            self.target_agent.load_state_dict(self.agent.state_dict())
            self.target_mixer.load_state_dict(self.mixer.state_dict())
        return loss.item(), grad_norm.item()


def run(learner, buffer, args):
    for t_env in range(0, args.t_max, args.batch_episodes):
        batch = buffer.sample(args.batch_size)
        loss, gn = learner.train(batch, t_env)
        if t_env % args.log_interval == 0:
            print(t_env, loss, gn)
