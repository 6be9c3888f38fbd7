# Source: https://github.com/julienlarivierechartier/COMP_4010_Team_24_Project/blob/24783d388cbb5045e394b14b5f5b814901ac425f/algorithms/PPO/ppo_agent.py
# Report: audit: PPOAgent.select_action runs the actor-critic forward with grad enabled and stores logprob.cpu() and value.cpu().squeeze() in the rollout buffer; .cpu() keeps the autograd history, so every env step's activations stay alive until the buffer is cleared
# Shape: rollout buffer of lists on the agent, filled from a per-step select_action called by the episode loop; the stored values are CPU copies that still carry the graph
# Expect: TML001 line 47; TML001 line 48
import numpy as np
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=128):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.actor = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, action_dim))
        self.critic = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        h = self.shared(x)
        return self.actor(h), self.critic(h)


class RolloutBuffer:
    def __init__(self):
        self.clear()

    def clear(self):
        self.states, self.actions, self.logprobs = [], [], []
        self.values, self.rewards, self.dones = [], [], []


class PPOAgent:
    def __init__(self, obs_dim, action_dim, lr=3e-4, device=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.policy = ActorCritic(obs_dim, action_dim).to(self.device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.buffer = RolloutBuffer()

    def select_action(self, obs: np.ndarray) -> int:
        obs_t = torch.tensor(obs, dtype=torch.float32, device=self.device)
        logits, value = self.policy(obs_t)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        logprob = dist.log_prob(action)

        self.buffer.states.append(obs_t.cpu())
        self.buffer.actions.append(action.item())
        self.buffer.logprobs.append(logprob.cpu())  # expect: TML001
        self.buffer.values.append(value.cpu().squeeze())  # expect: TML001
        return action.item()

    def run_episode(self, env, max_steps=1000):
        obs, _ = env.reset()
        episode_return = 0.0
        for _ in range(max_steps):
            action = self.select_action(obs)
            obs, reward, terminated, truncated, _ = env.step(action)
            self.buffer.rewards.append(float(reward))
            self.buffer.dones.append(terminated or truncated)
            episode_return += reward
            if terminated or truncated:
                break
        return episode_return


def train(agent, env, episodes=500, update_every=4, update_fn=None):
    returns = []
    for ep in range(episodes):
        returns.append(agent.run_episode(env))
        if (ep + 1) % update_every == 0 and update_fn is not None:
            update_fn(agent)
            agent.buffer.clear()
        if (ep + 1) % 50 == 0:
            print(f"episode {ep + 1}: mean return {np.mean(returns[-50:]):.1f}")
    return returns
