# Source: https://github.com/Baesian-Balancer/BAE/blob/main/keith_scratch_mbrl/mbrl_attempt.py
# Report: model-based RL script whose calculate_loss helper returns the transition net's own L1 objective (a graph-attached tensor) instead of the original no_grad + sklearn float
# Shape: the helper's loss carries the transition-net graph of every step; it is appended to the episode's losses list and summed into episode_loss, which is then appended to episode_losses for the whole run (no backward ever frees those graphs)
# Expect: TML001 lines 45, 47, 54
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StateTransitionNet(nn.Module):
    def __init__(self, n_in, hidden, n_out, device):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, n_out)
        self.device = device

    def forward(self, sa):
        return torch.sigmoid(self.fc2(F.relu(self.fc1(sa))))

    def get_state(self, state_action):
        sa = torch.from_numpy(state_action).float().unsqueeze(0).to(self.device)
        return self.forward(sa)


def calculate_loss(pred_state, new_state):
    target = torch.as_tensor(new_state, dtype=torch.float32, device=pred_state.device)
    return F.l1_loss(pred_state.squeeze(0), target)


def main(env, policy, transition_net, normalize, num_episodes=100, max_steps=3000, log_every=20):
    episode_rewards, episode_losses = [], []
    for episode in range(num_episodes):
        obs = normalize(env.reset())
        losses = []
        episode_reward, episode_loss = 0.0, 0.0
        done, step = False, 0
        while not done:
            action = policy.act(obs)
            pred_state = transition_net.get_state(np.concatenate((obs, action)))
            new_obs, reward, done, _ = env.step(action)
            new_obs = normalize(new_obs)

            loss = calculate_loss(pred_state, new_obs)
            losses.append(loss)  # expect: TML001
            episode_reward += reward
            episode_loss += loss  # expect: TML001

            step += 1
            if step == max_steps:
                done = True
            if done:
                episode_rewards.append(episode_reward)
                episode_losses.append(episode_loss)  # expect: TML001
            obs = new_obs
        if episode % log_every == 0 and episode:
            print(episode, np.mean(episode_rewards[-log_every:]), torch.stack(losses).mean().item())
    return episode_rewards, episode_losses
