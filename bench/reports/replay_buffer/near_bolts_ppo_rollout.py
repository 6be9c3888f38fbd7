# Source: https://github.com/Lightning-Universe/lightning-bolts/pull/425
# Report: the bolts RL trajectory buffers (states/actions/qvals lists kept on the LightningModule) were never cleared after collection, so every training batch held all previous episodes and memory/time grew (source note: code: https://github.com/Lightning-Universe/lightning-bolts/blob/1fa9ef599325b504bb38ed26ca24bdf3a926fad9/src/pl_bolts/models/rl/ppo_model.py)
# Shape: the bolts PPO rollout as written after #425: the policy forward runs under torch.no_grad() (log-prob is a plain device tensor) and all batch_* buffers are .clear()ed once the epoch's samples are yielded
# Expect: near-miss: must be silent
from typing import List

import torch
from lightning import LightningModule
from torch.utils.data import DataLoader

from pl_bolts.datamodules import ExperienceSourceDataset
from pl_bolts.models.rl.common.networks import MLP, ActorCategorical


class PPO(LightningModule):
    def __init__(self, env, gamma=0.99, lam=0.95, batch_size=512, steps_per_epoch=2048, max_episode_len=200):
        super().__init__()
        import gym
        self.env = gym.make(env)
        self.gamma, self.lam = gamma, lam
        self.batch_size = batch_size
        self.steps_per_epoch = steps_per_epoch
        self.max_episode_len = max_episode_len
        self.critic = MLP(self.env.observation_space.shape, 1)
        self.actor = ActorCategorical(MLP(self.env.observation_space.shape, self.env.action_space.n))

        self.batch_states = []
        self.batch_actions = []
        self.batch_adv = []
        self.batch_qvals = []
        self.batch_logp = []
        self.ep_rewards = []
        self.ep_values = []
        self.state = torch.FloatTensor(self.env.reset())

    def forward(self, x):
        pi, action = self.actor(x)
        value = self.critic(x)
        return pi, action, value

    def discount_rewards(self, rewards: List[float], discount: float) -> List[float]:
        out, sum_r = [], 0.0
        for r in reversed(rewards):
            sum_r = sum_r * discount + r
            out.append(sum_r)
        return list(reversed(out))

    def calc_advantage(self, rewards, values, last_value):
        rews, vals = rewards + [last_value], values + [last_value]
        delta = [rews[i] + self.gamma * vals[i + 1] - vals[i] for i in range(len(rews) - 1)]
        return self.discount_rewards(delta, self.gamma * self.lam)

    def generate_trajectory_samples(self):
        for step in range(self.steps_per_epoch):
            self.state = self.state.to(device=self.device)
            with torch.no_grad():
                pi, action, value = self(self.state)
                log_prob = self.actor.get_log_prob(pi, action)
            next_state, reward, done, _ = self.env.step(action.cpu().numpy())

            self.batch_states.append(self.state)
            self.batch_actions.append(action)
            self.batch_logp.append(log_prob)
            self.ep_rewards.append(reward)
            self.ep_values.append(value.item())
            self.state = torch.FloatTensor(next_state)

            epoch_end = step == (self.steps_per_epoch - 1)
            terminal = len(self.ep_rewards) == self.max_episode_len
            if epoch_end or done or terminal:
                last_value = 0.0
                self.batch_qvals += self.discount_rewards(self.ep_rewards + [last_value], self.gamma)[:-1]
                self.batch_adv += self.calc_advantage(self.ep_rewards, self.ep_values, last_value)
                self.ep_rewards = []
                self.ep_values = []
                self.state = torch.FloatTensor(self.env.reset())

            if epoch_end:
                train_data = zip(self.batch_states, self.batch_actions, self.batch_logp,
                                 self.batch_qvals, self.batch_adv)
                for state, action, logp_old, qval, adv in train_data:
                    yield state, action, logp_old, qval, adv
                self.batch_states.clear()
                self.batch_actions.clear()
                self.batch_adv.clear()
                self.batch_logp.clear()
                self.batch_qvals.clear()

    def training_step(self, batch, batch_idx):
        state, action, old_logp, qval, adv = batch
        pi, _ = self.actor(state)
        logp = self.actor.get_log_prob(pi, action)
        ratio = torch.exp(logp - old_logp)
        clip_adv = torch.clamp(ratio, 0.8, 1.2) * adv
        loss_actor = -(torch.min(ratio * adv, clip_adv)).mean()
        loss_critic = (qval - self.critic(state)).pow(2).mean()
        return loss_actor + loss_critic

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=3e-4)

    def train_dataloader(self):
        return DataLoader(ExperienceSourceDataset(self.generate_trajectory_samples), batch_size=self.batch_size)
