# Source: https://github.com/k4ntz/SCoBots/pull/4
# Report: after the fix the agent's per-episode statistics are plain numbers.
# Shape: same policy-update helper returning the loss and entropy; the episode loop keeps their `.item()` values.
# Expect: near-miss: must be silent
from collections import defaultdict

import torch


def discounted_returns(rewards, gamma):
    returns, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def update_policy(optimizer, log_probs, entropies, rewards, gamma=0.99, beta=0.01):
    returns = discounted_returns(rewards, gamma)
    entropy = torch.stack(entropies).mean()
    policy_loss = -(torch.stack(log_probs) * returns).sum() - beta * entropy
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
    return policy_loss, entropy


def train(env, policy, optimizer, episodes):
    stats = defaultdict(list)
    for episode in range(episodes):
        state, done = env.reset(), False
        log_probs, entropies, rewards = [], [], []
        while not done:
            dist = policy(torch.as_tensor(state, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            state, reward, done, _ = env.step(action.item())
            rewards.append(reward)
        policy_loss, entropy = update_policy(optimizer, log_probs, entropies, rewards)
        stats["policy_loss"].append(policy_loss.item())
        stats["entropy"].append(entropy.item())
        stats["return"].append(sum(rewards))
    return stats
