# Source: https://github.com/nikhilbarhate99/PPO-PyTorch/issues/16
# Report: PPO continuous training on a robot: RAM climbed over each rollout and spiked at every update because the rollout Memory held the policy graph; upstream fix samples under torch.no_grad and stores detached log-probs
# Shape: fixed variant: act() returns detached tensors and select_action() fills the rollout Memory inside torch.no_grad(), so the lists hold plain values
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal

device = torch.device("cpu")  # trained on the robot PC, RAM was the resource that ran out


class Memory:
    def __init__(self):
        self.actions, self.states, self.logprobs = [], [], []
        self.rewards, self.is_terminals = [], []

    def clear_memory(self):
        for buf in (self.actions, self.states, self.logprobs, self.rewards, self.is_terminals):
            del buf[:]


class ActorCritic(nn.Module):
    def __init__(self, state_dim, action_dim, action_std):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(),
                                   nn.Linear(64, 64), nn.Tanh(),
                                   nn.Linear(64, action_dim), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(),
                                    nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.action_var = torch.full((action_dim,), action_std * action_std, device=device)

    def act(self, state):
        mean = self.actor(state)
        dist = MultivariateNormal(mean, torch.diag(self.action_var))
        action = dist.sample()
        action_logprob = dist.log_prob(action)
        return action.detach(), action_logprob.detach()


class PPOAgent:
    def __init__(self, state_dim, action_dim, action_std=0.5):
        self.policy_old = ActorCritic(state_dim, action_dim, action_std).to(device)

    def select_action(self, state, memory):
        with torch.no_grad():
            state = torch.as_tensor(state.reshape(1, -1), dtype=torch.float32, device=device)
            action, action_logprob = self.policy_old.act(state)
            memory.states.append(state)
            memory.actions.append(action)
            memory.logprobs.append(action_logprob)
        return action.cpu().numpy().flatten()


def run(env, agent, update_fn, max_episodes=2500, max_timesteps=400, update_timestep=400):
    memory = Memory()
    time_step = 0
    for episode in range(1, max_episodes + 1):
        state, _ = env.reset()
        for t in range(max_timesteps):
            time_step += 1
            action = agent.select_action(state, memory)
            state, reward, terminated, truncated, _ = env.step(action)
            memory.rewards.append(reward)
            memory.is_terminals.append(terminated or truncated)
            if time_step % update_timestep == 0:
                update_fn(memory)
                memory.clear_memory()
            if terminated or truncated:
                break
