# Source: https://github.meta-core.cn/Gaurav37/Reinforcement-Learning-Project-Practice
# Report: a REINFORCE agent stores each step's action log-probability in self.action_memory (and the reward in reward_memory) and builds the policy loss from them in learn() after every episode.
# Shape: rewrite where learn() forgets to empty the memories: the agent keeps every episode's log-probabilities (with their graphs) for the whole run.
# Expect: TML001 line 22
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
        self.action_memory.append(distribution.log_prob(action))  # expect: TML001
        return action.item()

    def learn(self):
        returns, g = [], 0.0
        for r in reversed(self.reward_memory[-len(self.action_memory):]):
            g = r + self.gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = sum(-g * logprob for g, logprob in zip(returns, self.action_memory[-len(returns):]))
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
