# Source: https://github.com/ysyszheng/DAG-TFM/blob/03b53658a4d790e5cb95d6a7b8b0bb667d75dfd6/agents/ppo.py
# Report: audited bug: PPO.select_action() runs actor and critic with grad enabled and appends the log-prob and the critic value straight into self.buffer (a RolloutBuffer on the agent), so each env step's actor and critic graphs stay alive until update() clears the buffer
# Shape: the graph-attached log_prob (from the actor's forward) and sv (critic(state)) are stored into lists of self.buffer inside a method the per-step loop calls; states and (detached) actions are kept on the host
# Expect: TML001 line 56; TML001 line 57
import numpy as np
import torch
import torch.nn as nn


class RolloutBuffer:
    def __init__(self):
        self.states, self.actions, self.logprobs = [], [], []
        self.rewards, self.state_values = [], []

    def clear(self):
        del self.states[:]
        del self.actions[:]
        del self.logprobs[:]
        del self.rewards[:]
        del self.state_values[:]


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, std_init):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 64), nn.ReLU(),
                                 nn.Linear(64, action_dim), nn.Sigmoid())
        self.std = std_init

    def forward(self, s):
        dist = torch.distributions.Normal(self.net(s), self.std)
        a = dist.sample().clamp(0, 1)
        return a, dist.log_prob(a)

    def evaluate(self, s, a):
        dist = torch.distributions.Normal(self.net(s), self.std)
        return dist.log_prob(a), dist.entropy()


class PPO:
    def __init__(self, state_dim, action_dim, lr, c1, c2, k_epochs, eps_clip, std_init, device):
        self.actor = Actor(state_dim, action_dim, std_init).to(device)
        self.critic = nn.Sequential(nn.Linear(state_dim, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=lr)
        self.c1, self.c2, self.k_epochs, self.eps_clip = c1, c2, k_epochs, eps_clip
        self.device = device
        self.buffer = RolloutBuffer()

    def select_action(self, state):
        state = torch.as_tensor(np.asarray(state), dtype=torch.float32).reshape(1, -1)
        s = state.to(self.device)
        a, log_prob = self.actor(s)
        sv = self.critic(s)
        self.buffer.states.append(state)
        self.buffer.actions.append(a.detach().cpu())
        self.buffer.logprobs.append(log_prob)  # expect: TML001
        self.buffer.state_values.append(sv)  # expect: TML001
        return a.cpu().numpy().flatten()

    def update(self):
        rewards = torch.tensor(self.buffer.rewards, dtype=torch.float32, device=self.device)
        rewards = ((rewards - rewards.mean()) / (rewards.std() + 1e-7)).reshape(-1, 1)
        old_states = torch.cat(self.buffer.states).to(self.device)
        old_actions = torch.cat(self.buffer.actions).to(self.device)
        old_logprobs = torch.cat(self.buffer.logprobs).detach()
        old_values = torch.cat(self.buffer.state_values).detach()
        advantages = rewards - old_values
        for _ in range(self.k_epochs):
            logprobs, entropy = self.actor.evaluate(old_states, old_actions)
            values = self.critic(old_states)
            ratios = torch.exp(logprobs - old_logprobs)
            surr = torch.min(ratios * advantages,
                             torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages)
            loss = -surr + self.c1 * nn.functional.mse_loss(values, rewards) - self.c2 * entropy
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()
        self.buffer.clear()


def train_ppo(env, agent, num_episodes, update_freq):
    step = 0
    for episode in range(num_episodes):
        state = env.reset()
        done = False
        while not done:
            action = agent.select_action(state)
            state, reward, done, _ = env.step(action)
            agent.buffer.rewards.append(reward)
            step += 1
            if step % update_freq == 0:
                agent.update()
