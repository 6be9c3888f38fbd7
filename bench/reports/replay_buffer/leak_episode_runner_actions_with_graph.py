# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: in the EpisodeRunner the actions chosen by the agents were stored into the replay buffer without being detached, so the computational graph that produced each action stayed in memory (OOM over millions of steps).
# Shape: the action selector returns a tuple (actions, log-probabilities) computed with autograd on; the runner puts both in the episode batch, which goes into a buffer kept for the whole run.
# Expect: TML001 line 41
import torch
import torch.nn as nn


class AgentController:
    def __init__(self, agent: nn.Module):
        self.agent = agent

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
        actions, log_probs, hidden = controller.select_actions(obs, hidden.detach())
        next_obs, reward, done = env.step(actions.tolist())
        episode["obs"].append(obs)
        episode["actions"].append(actions)
        episode["log_probs"].append(log_probs)  # expect: TML001
        episode["rewards"].append(reward)
        obs = next_obs
    buffer.insert_episode(episode)
