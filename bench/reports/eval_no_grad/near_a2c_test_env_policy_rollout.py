# Source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/blob/703d23800b20d361c4cd6b5ceebf4a07b1c2b3a7/Char4%20A2C/A2C.py
# Report: audit of an A2C CartPole script whose test_env() plays evaluation episodes with the actor-critic on the GPU outside no_grad; this is the fixed version: the evaluation helper is decorated with @torch.no_grad(), so its forward passes save nothing for backward
# Shape: same ActorCritic and training loop; test_env() keeps its per-step model call and sampled action but runs under a @torch.no_grad() decorator
# Expect: near-miss: must be silent
import gym
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ActorCritic(nn.Module):
    def __init__(self, n_obs, n_act, hidden=256):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU(), nn.Linear(hidden, n_act))

    def forward(self, obs):
        logits = self.actor(obs)
        return Categorical(logits=logits), self.critic(obs)


env = gym.make("CartPole-v1")
eval_env = gym.make("CartPole-v1")
model = ActorCritic(env.observation_space.shape[0], env.action_space.n).to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


@torch.no_grad()
def test_env(max_steps=500):
    obs, _ = eval_env.reset()
    total_reward = 0.0
    for _ in range(max_steps):
        state = torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        dist, _ = model(state)
        obs, reward, terminated, truncated, _ = eval_env.step(dist.sample().item())
        total_reward += reward
        if terminated or truncated:
            break
    return total_reward


def train(max_frames=20000, gamma=0.99, eval_every=100):
    test_rewards = []
    obs, _ = env.reset()
    for frame_idx in range(1, max_frames + 1):
        state = torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        dist, value = model(state)
        action = dist.sample()
        obs, reward, terminated, truncated, _ = env.step(action.item())
        next_state = torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        with torch.no_grad():
            _, next_value = model(next_state)
        target = reward + gamma * next_value * (0.0 if terminated else 1.0)
        advantage = target - value
        actor_loss = -(dist.log_prob(action) * advantage.detach()).mean()
        critic_loss = advantage.pow(2).mean()
        loss = actor_loss + 0.5 * critic_loss - 0.001 * dist.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if terminated or truncated:
            obs, _ = env.reset()
        if frame_idx % eval_every == 0:
            test_rewards.append(np.mean([test_env() for _ in range(10)]))
            print(f"frame {frame_idx}: eval reward {test_rewards[-1]:.1f}")
    return test_rewards


if __name__ == "__main__":
    train()
