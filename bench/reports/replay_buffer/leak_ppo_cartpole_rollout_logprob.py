# Source: https://github.com/WhimsicalWill/AccessibleRL/blob/0c29e2c96d84d447a5024f30aad70fdb51bb7bd1/PPO/utils/ppo.py
# Report: audit of a CartPole PPO agent whose select_action() runs the actor with grad enabled: the repo appends dist.log_prob(action).detach() to the rollout buffer; this is the variant it avoided, where the raw log-prob goes in and the detach only happens when update() stacks the buffer, so each of the 4000 acting steps keeps its actor graph alive until then
# Shape: same PPO.select_action() appending into the RolloutBuffer lists on self.data; update() detaches the stacked old log-probs (too late) and clears the buffer
# Expect: TML001 line 40
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RolloutBuffer:
    def __init__(self):
        self.states, self.actions, self.log_probs = [], [], []
        self.rewards, self.is_terminals = [], []

    def clear(self):
        for store in (self.states, self.actions, self.log_probs, self.rewards, self.is_terminals):
            store.clear()


class PPO:
    def __init__(self, env, actor, critic, samples_per_policy=4000, epochs=80, gamma=0.99, clip=0.2):
        self.env, self.actor, self.critic = env, actor.to(device), critic.to(device)
        self.samples_per_policy, self.epochs, self.gamma, self.clip = samples_per_policy, epochs, gamma, clip
        self.data = RolloutBuffer()
        self.optimizer = torch.optim.Adam([
            {"params": self.actor.parameters(), "lr": 3e-4},
            {"params": self.critic.parameters(), "lr": 1e-3},
        ])
        self.reward_history = []

    def select_action(self, obs):
        state = torch.as_tensor(obs, dtype=torch.float32, device=device)
        dist = Categorical(self.actor(state))
        action = dist.sample()
        self.data.states.append(state)
        self.data.actions.append(action.detach())
        self.data.log_probs.append(dist.log_prob(action))  # expect: TML001
        return action.item()

    def returns_to_go(self):
        out, running = [], 0.0
        for r, done in zip(reversed(self.data.rewards), reversed(self.data.is_terminals)):
            running = r + self.gamma * running * (not done)
            out.insert(0, running)
        out = torch.tensor(out, dtype=torch.float32, device=device)
        return (out - out.mean()) / (out.std() + 1e-8)

    def update(self):
        returns = self.returns_to_go()
        states = torch.stack(self.data.states)
        actions = torch.stack(self.data.actions)
        old_log_probs = torch.stack(self.data.log_probs).detach()
        for _ in range(self.epochs):
            dist = Categorical(self.actor(states))
            values = self.critic(states).squeeze(-1)
            ratio = torch.exp(dist.log_prob(actions) - old_log_probs)
            adv = returns - values.detach()
            surr = torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv)
            loss = -surr.mean() + 0.5 * F.mse_loss(values, returns) - 0.01 * dist.entropy().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self.data.clear()

    def train(self, max_steps=400_000, max_ep_len=1000):
        step = 0
        while step < max_steps:
            obs, ep_reward = self.env.reset(), 0.0
            for _ in range(max_ep_len):
                action = self.select_action(obs)
                obs, reward, done, _ = self.env.step(action)
                step += 1
                ep_reward += reward
                self.data.rewards.append(reward)
                self.data.is_terminals.append(done)
                if step % self.samples_per_policy == 0:
                    self.update()
                if done:
                    break
            self.reward_history.append(ep_reward)
        return self.reward_history
