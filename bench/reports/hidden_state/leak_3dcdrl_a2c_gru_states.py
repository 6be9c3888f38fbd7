# Source: https://github.com/edbeeching/3d_control_deep_rl/blob/0814d2c7dbd814cacc5e8589bc87ee114ced513a/3dcdrl/a2c_agent.py
# Report: audited repository code: the recurrent A2C agent carries the GRU state on self.states across every environment step and across updates; the repository detaches it at the end of update() so each update backpropagates through num_steps only (source note: also issue #3 on GRU state handling)
# Shape: same A2CAgent/train loop shape; update() resets the value/log-prob lists but no longer detaches self.states, so the next rollout chains onto the previous update's (freed) graph
# Expect: TML005 line 35
import numpy as np
import torch
from torch import nn


class A2CAgent:
    def __init__(self, policy, state_size, value_weight=0.5, entropy_weight=0.001,
                 num_steps=128, num_parallel=16, gamma=0.99, lr=7.5e-4, max_grad_norm=0.5):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.policy = policy
        self.num_steps = num_steps
        self.optimizer = torch.optim.RMSprop([p for p in policy.parameters() if p.requires_grad], lr, alpha=0.99)
        self.value_weight = value_weight
        self.entropy_weight = entropy_weight
        self.gamma = gamma
        self.max_grad_norm = max_grad_norm
        # values, entropies and log-probs are needed for backprop: kept as lists until update()
        self.values = []
        self.entropies = []
        self.action_log_probs = []
        self.rewards = torch.zeros(num_steps, num_parallel, 1, device=self.device)
        self.masks = torch.zeros(num_steps + 1, num_parallel, 1, device=self.device)
        self.states = torch.zeros(num_parallel, state_size, device=self.device)

    def get_action(self, obs, step):
        obs = torch.from_numpy(obs).float().to(self.device)
        result = self.policy(obs, self.states, self.masks[step])
        self.values.append(result['values'])
        self.action_log_probs.append(result['action_log_probs'])
        self.entropies.append(result['entropy'])
        self.states = result['states']  # expect: TML005
        return result['actions'].detach().cpu().numpy()

    def add_rewards_masks(self, reward, done, step):
        reward = torch.from_numpy(np.expand_dims(np.array(reward), 1)).float()
        self.rewards[step].copy_(reward.to(self.device))
        masks = torch.FloatTensor([[0.0] if d else [1.0] for d in done])
        self.masks[step + 1].copy_(masks.to(self.device))

    def calculate_discounted_returns(self, next_values):
        discounted = torch.zeros_like(self.rewards)
        R = next_values
        for i in reversed(range(discounted.size(0))):
            R = discounted[i] = self.rewards[i] + self.gamma * self.masks[i + 1] * R
        return discounted

    def update(self, next_obs):
        next_obs = torch.from_numpy(next_obs).float().to(self.device)
        result = self.policy(next_obs, self.states.detach(), self.masks[-1])
        next_value = result['values'].detach()
        returns = self.calculate_discounted_returns(next_value).squeeze(2)
        values = torch.stack(self.values).squeeze(2)
        action_log_probs = torch.stack(self.action_log_probs)
        entropies = torch.stack(self.entropies)

        advantages = returns.detach() - values
        value_loss = advantages.pow(2).mean()
        policy_loss = -(advantages.detach() * action_log_probs).mean()
        entropy_loss = entropies.mean()
        loss = policy_loss + self.value_weight * value_loss - self.entropy_weight * entropy_loss

        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
        self.optimizer.step()

        # reset buffers
        self.values = []
        self.action_log_probs = []
        self.entropies = []
        self.masks[0].copy_(self.masks[-1])
        return value_loss.item(), policy_loss.item(), entropy_loss.item()


def train(agent, train_envs, num_updates, num_steps):
    obs = train_envs.reset()
    for j in range(num_updates):
        for step in range(num_steps):
            action = agent.get_action(obs, step)
            obs, reward, done, info = train_envs.step(action)
            agent.add_rewards_masks(reward, done, step)
        report = agent.update(obs)
        if j % 100 == 0:
            print(j, report)
