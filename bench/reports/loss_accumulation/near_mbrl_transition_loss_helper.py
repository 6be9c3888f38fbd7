# Source: https://github.com/Baesian-Balancer/BAE/blob/main/keith_scratch_mbrl/mbrl_attempt.py
# Report: model-based RL on a monopod: a state-transition network predicts the next observation every step and the prediction error is logged per step and per episode for plotting
# Shape: calculate_loss() is a helper that moves the prediction to the CPU under no_grad and returns sklearn's mean_squared_error (a numpy float), so losses.append / episode_loss += / episode_losses.append only keep numbers
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import mean_squared_error


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
    with torch.no_grad():
        pred = np.squeeze(pred_state.cpu().numpy())
        loss = mean_squared_error(pred, new_state)
    return loss


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
            losses.append(loss)
            episode_reward += reward
            episode_loss += loss

            step += 1
            if step == max_steps:
                done = True
            if done:
                episode_rewards.append(episode_reward)
                episode_losses.append(episode_loss)
            obs = new_obs
        if episode % log_every == 0 and episode:
            print(episode, np.mean(episode_rewards[-log_every:]), np.mean(losses))
    return episode_rewards, episode_losses
