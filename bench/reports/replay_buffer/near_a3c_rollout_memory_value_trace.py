# Source: https://github.com/WhimsicalWill/RLBoard/blob/f5ab9a81bf4d607e7787aa8c2f9ce9c599bb4e46/ICM/agent_class.py
# Report: audit of an A3C+ICM worker: choose_action returns the attached value and log_prob, store_transition forwards them into a Memory object that learn() consumes and resets after every update (correct); the near-miss keeps that and records the critic estimate as a float
# Shape: attached value and log_prob still travel from choose_action through store_transition into the rollout memory (cleared by learn after each update); the run-long self.value_trace receives value.item()
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Categorical


class RolloutMemory:
    def __init__(self):
        self.reset()

    def store(self, reward, value, log_prob):
        self.rewards.append(reward)
        self.values.append(value)
        self.log_probs.append(log_prob)

    def reset(self):
        self.rewards, self.values, self.log_probs = [], [], []


class Agent:
    def __init__(self, actor_critic, optimizer, gamma=0.99, device="cuda"):
        self.actor_critic = actor_critic.to(device)
        self.optimizer = optimizer
        self.gamma = gamma
        self.device = device
        self.memory = RolloutMemory()
        self.value_trace = []

    def store_transition(self, reward, value, log_prob):
        self.memory.store(reward, value, log_prob)

    def choose_action(self, obs):
        state = torch.tensor(np.array([obs]), dtype=torch.float32, device=self.device)
        probs, value = self.actor_critic(state)
        self.value_trace.append(value.item())
        dist = Categorical(probs)
        action = dist.sample()
        return action.item(), value, dist.log_prob(action)

    def learn(self, next_obs, done):
        with torch.no_grad():
            state = torch.tensor(np.array([next_obs]), dtype=torch.float32, device=self.device)
            R = torch.zeros(1, 1, device=self.device) if done else self.actor_critic(state)[1]
        returns = []
        for r in reversed(self.memory.rewards):
            R = r + self.gamma * R
            returns.append(R)
        returns = torch.cat(returns[::-1]).squeeze(-1)
        values = torch.cat(self.memory.values).squeeze(-1)
        log_probs = torch.cat(self.memory.log_probs)
        advantage = (returns - values).detach()
        loss = -(log_probs * advantage).sum() + F.mse_loss(values, returns)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.memory.reset()


def run_worker(env, agent, max_steps=100_000, t_max=20):
    t_steps, scores = 0, []
    while t_steps < max_steps:
        obs, done, score, ep_steps = env.reset(), False, 0.0, 0
        while not done:
            action, value, log_prob = agent.choose_action(obs)
            next_obs, reward, done, _ = env.step(action)
            agent.store_transition(reward, value, log_prob)
            score += reward
            ep_steps += 1
            t_steps += 1
            obs = next_obs
            if ep_steps % t_max == 0 or done:
                agent.learn(next_obs, done)
        scores.append(score)
        print(f"episode {len(scores)}: score {score:.0f}, avg {np.mean(scores[-100:]):.1f}")
    return scores, agent.value_trace
