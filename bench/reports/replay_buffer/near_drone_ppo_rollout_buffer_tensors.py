# Source: https://github.com/Nagul71/Drones-Emergent-Communication/blob/b65a1f6a207db21daf147ac16f31cc13e14fd63b/run_simulation.py
# Report: audit of the multi-drone PPO runner: the rollout buffer lives across episodes (it is cleared only after an update), but PPOAgent.act() runs the policy under torch.no_grad() and hands back log_prob.item() and value.item(), so the buffer holds host floats and numpy actions only
# Shape: PPOAgent.act(obs) returns (action, log_prob, value) as numpy/float; the episode loop appends obs/action/log_prob/value per drone to a RolloutBuffer kept across episodes; ppo_update() rebuilds tensors from the lists; buffer.clear() only after an update
# Expect: near-miss: must be silent
import torch
from torch.distributions import Normal

from environment.env import Environment
from environment.scenario_loader import Scenario
from learning.buffer import RolloutBuffer
from learning.policy import PolicyNet
from learning.ppo import ppo_update

EPISODES = 300
STEPS_PER_UPDATE = 1024
CHECKPOINT_PATH = "checkpoints/policy_latest.pth"


class PPOAgent:
    def __init__(self, policy):
        self.policy = policy

    def act(self, obs):
        obs_t = torch.tensor(obs, dtype=torch.float32)
        with torch.no_grad():
            mean, std, value = self.policy(obs_t)
        dist = Normal(mean, std)
        action = dist.sample()
        log_prob = dist.log_prob(action).sum().item()
        return action.numpy(), log_prob, value.item()


def train(scenario_path="configs/scenario.yaml"):
    env = Environment(Scenario(scenario_path))
    policy = PolicyNet(obs_dim=9, act_dim=2)
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    agent = PPOAgent(policy)
    buffer = RolloutBuffer()
    coverage_history, reward_history = [], []

    for episode in range(EPISODES):
        obs = env.reset()
        done = False
        step_count = 0
        episode_reward = 0.0
        while not done:
            actions = {}
            for i in obs:
                action, log_prob, value = agent.act(obs[i])
                actions[i] = action
                buffer.obs.append(obs[i])
                buffer.actions.append(action)
                buffer.log_probs.append(log_prob)
                buffer.values.append(value)
            obs, rewards, done, _ = env.step(actions)
            for i in rewards:
                buffer.rewards.append(rewards[i])
                buffer.dones.append(done)
                episode_reward += rewards[i]
            coverage_history.append(env.coverage_grid.get_coverage_percentage())
            step_count += 1
            if step_count >= STEPS_PER_UPDATE:
                ppo_update(policy, optimizer, buffer)
                buffer.clear()
                step_count = 0
        torch.save(policy.state_dict(), CHECKPOINT_PATH)
        reward_history.append(episode_reward)
        print(f"Episode {episode} | Total Reward: {episode_reward:.2f}")
    return coverage_history, reward_history
