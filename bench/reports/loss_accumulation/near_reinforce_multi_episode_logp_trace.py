# Source: https://github.com/trevor-richardson/collision_avoidant_reinforcement/blob/c8b0abc2e1f98bec2e78f1012a0448b971c25ee4/machine_learning/no_repeat_train.py
# Report: audit of the robot REINFORCE trainer: the policy keeps the attached log-prob of every step on itself across three episodes, which is correct because update_policy_network() backpropagates one loss over all of them and then empties the lists with del ...[:]; only numbers leave the update
# Shape: Policy_Network keeps saved_log_probs / rewards / reset_locations lists; run_episode() appends m.log_prob(action) per step; every third episode update_policy_network() builds the discounted loss, steps, clears the lists and returns (mean reward, mean log-prob as a float); main appends floats
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

eps = np.finfo(np.float32).eps.item()


class Policy_Network(nn.Module):
    def __init__(self, inp, h0, h1, n_actions, drop=0.3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inp, h0), nn.ReLU(), nn.Dropout(drop), nn.Linear(h0, h1), nn.ReLU())
        self.out = nn.Linear(h1, n_actions)
        self.saved_log_probs, self.rewards, self.reset_locations = [], [], []

    def forward(self, x):
        return F.softmax(self.out(self.body(x)), dim=-1)


def run_episode(env, model, device, max_steps=190):
    state, done, t = env.reset(), False, 0
    while not done and t < max_steps:
        probs = model(torch.as_tensor(state, dtype=torch.float32, device=device))
        m = Categorical(probs)
        action = m.sample()
        model.saved_log_probs.append(m.log_prob(action))
        state, reward, done = env.step(action.item())
        model.rewards.append(reward)
        t += 1


def update_policy_network(model, optimizer, gamma):
    R, rewards = 0, []
    counter = len(model.saved_log_probs) - 1
    count_reset = len(model.reset_locations) - 1
    for r in model.rewards[::-1]:
        if count_reset >= 0 and model.reset_locations[count_reset] == counter:
            R = 0
            count_reset -= 1
        R = r + gamma * R
        rewards.insert(0, R)
        counter -= 1
    rewards = torch.tensor(rewards, device=model.out.weight.device)
    total_rew = rewards.sum().item()
    rewards = (rewards - rewards.mean()) / (rewards.std() + eps)
    log_probs = torch.stack(model.saved_log_probs)
    policy_loss = (-log_probs * rewards).mean()
    policy_loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    del model.rewards[:], model.reset_locations[:], model.saved_log_probs[:]
    return total_rew / len(rewards), log_probs.mean().item()


def main(env, model, optimizer, iterations=30000, gamma=0.99, device="cuda"):
    reward_log, logp_trace = [], []
    for index in range(iterations):
        run_episode(env, model, device)
        model.reset_locations.append(len(model.saved_log_probs) - 1)
        if (index + 1) % 3 == 0:
            mean_reward, mean_logp = update_policy_network(model, optimizer, gamma)
            reward_log.append(mean_reward)
            logp_trace.append(mean_logp)
            print("update {}: reward {:.3f} logp {:.3f}".format(len(reward_log), mean_reward, mean_logp))
        if (index + 1) % 320 == 0:
            torch.save(model.state_dict(), "pn{}.pth".format(index))
    return reward_log, logp_trace
