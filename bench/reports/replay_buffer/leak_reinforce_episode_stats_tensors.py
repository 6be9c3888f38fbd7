# Source: https://github.com/k4ntz/SCoBots/pull/4
# Report: the REINFORCE agent leaked memory because it tracked tensors in its per-episode statistics without detaching them.
# Shape: a policy-update helper returns the policy loss and the entropy it computed; the episode loop keeps both in a dict of lists of statistics for the whole run.
# Expect: TML001 lines 42, 43
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
        stats["policy_loss"].append(policy_loss)  # expect: TML001
        stats["entropy"].append(entropy)  # expect: TML001
        stats["return"].append(sum(rewards))
    return stats
