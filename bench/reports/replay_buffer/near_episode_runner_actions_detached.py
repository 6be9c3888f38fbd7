# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the fix detaches the actions (or converts them to numpy) before they go into the replay buffer.
# Shape: same controller and buffer; the runner selects actions under no_grad, so nothing stored carries a graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class AgentController:
    def __init__(self, agent: nn.Module):
        self.agent = agent

    @torch.no_grad()
    def select_actions(self, obs, hidden):
        logits, hidden = self.agent(obs, hidden)
        dist = torch.distributions.Categorical(logits=logits)
        actions = dist.sample()
        return actions, dist.log_prob(actions), hidden


class ReplayBuffer:
    def __init__(self, capacity):
        self.capacity = capacity
        self.episodes = []

    def insert_episode(self, episode):
        self.episodes.append(episode)
        if len(self.episodes) > self.capacity:
            self.episodes.pop(0)


def run_episode(env, controller, buffer, hidden_size=64):
    obs = env.reset()
    hidden = torch.zeros(env.n_agents, hidden_size)
    episode = {"obs": [], "actions": [], "log_probs": [], "rewards": []}
    done = False
    while not done:
        actions, log_probs, hidden = controller.select_actions(obs, hidden)
        next_obs, reward, done = env.step(actions.tolist())
        episode["obs"].append(obs)
        episode["actions"].append(actions.numpy())
        episode["log_probs"].append(log_probs.numpy())
        episode["rewards"].append(reward)
        obs = next_obs
    buffer.insert_episode(episode)
