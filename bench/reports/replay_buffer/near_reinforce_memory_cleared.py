# Source: https://d3axxy9bcycpv7.cloudfront.net/meta/PyTorch/examples/src/fragments/most_complex_unit/most_complex_unit_8.py.html
# Report: the PyTorch RPC reinforcement-learning example joins the saved log-probabilities and rewards, clears them (rewards[ob_id] = [], saved_log_probs[ob_id] = []) and then builds the policy loss.
# Shape: same REINFORCE agent; learn() empties both memories after the update, so the log-probabilities live for one episode only.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent:
    def __init__(self, state_dim, num_actions, lr=1e-3, gamma=0.99):
        self.policy = nn.Sequential(nn.Linear(state_dim, 256), nn.ReLU(), nn.Linear(256, num_actions))
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.gamma = gamma
        self.action_memory = []
        self.reward_memory = []

    def choose_action(self, observation):
        probabilities = F.softmax(self.policy(torch.as_tensor(observation, dtype=torch.float32)), dim=-1)
        distribution = torch.distributions.Categorical(probabilities)
        action = distribution.sample()
        self.action_memory.append(distribution.log_prob(action))
        return action.item()

    def learn(self):
        returns, g = [], 0.0
        for r in reversed(self.reward_memory):
            g = r + self.gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = torch.stack([-g * logprob for g, logprob in zip(returns, self.action_memory)]).sum()
        self.action_memory, self.reward_memory = [], []
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def train(env, agent, episodes=2500):
    for episode in range(episodes):
        observation, done = env.reset(), False
        while not done:
            observation, reward, done, _ = env.step(agent.choose_action(observation))
            agent.reward_memory.append(reward)
        agent.learn()
