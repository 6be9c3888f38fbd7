# Source: https://github.com/SfTI-Robotics/Autonav-RL-Gym/blob/0ff25d04e748996bd348fd3273fb77c7dbc7e723/src/ppo/ppo_models.py
# Report: audited bug: ActorCritic.act() runs the old policy with grad enabled and appends dist.log_prob(action) to the rollout Memory, so every env step's policy graph is kept alive in memory.logprobs until the next update
# Shape: same hidden store (ppo.select_action -> policy_old.act -> memory.logprobs.append), but act() now runs the old policy under torch.no_grad() (the fix upstream PPO code adopted), so the stored log-prob carries no graph (and is kept on the host like the states and actions)
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Memory:
    def __init__(self):
        self.actions, self.states, self.logprobs = [], [], []
        self.rewards, self.masks = [], []

    def clear_memory(self):
        del self.actions[:]
        del self.states[:]
        del self.logprobs[:]
        del self.rewards[:]
        del self.masks[:]


class ActorCritic(nn.Module):
    def __init__(self, state_dim, action_dim, n_latent_var):
        super().__init__()
        self.action_layer = nn.Sequential(
            nn.Linear(state_dim, n_latent_var), nn.ReLU(),
            nn.Linear(n_latent_var, action_dim), nn.Softmax(dim=-1))
        self.value_layer = nn.Sequential(
            nn.Linear(state_dim, n_latent_var), nn.ReLU(), nn.Linear(n_latent_var, 1))

    def act(self, state, memory):
        state = torch.from_numpy(state).float()
        with torch.no_grad():
            action_probs = self.action_layer(state.to(device))
            dist = Categorical(action_probs)
            action = dist.sample()
            logprob = dist.log_prob(action).cpu()
        memory.states.append(state)
        memory.actions.append(action.detach().cpu())
        memory.logprobs.append(logprob)
        return action.item()

    def evaluate(self, state, action):
        dist = Categorical(self.action_layer(state))
        return dist.log_prob(action), torch.squeeze(self.value_layer(state)), dist.entropy()


class PPO:
    def __init__(self, state_dim, action_dim, n_latent_var, lr, gamma, k_epochs, eps_clip, v_max):
        self.gamma, self.k_epochs, self.eps_clip = gamma, k_epochs, eps_clip
        self.actions = [[0, 0], [0, v_max], [v_max, 0], [v_max, v_max]]
        self.policy = ActorCritic(state_dim, action_dim, n_latent_var).to(device)
        self.policy_old = ActorCritic(state_dim, action_dim, n_latent_var).to(device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.mse = nn.MSELoss()

    def select_action(self, state, memory):
        action = self.policy_old.act(state, memory)
        return self.actions[action]

    def update(self, memory):
        rewards, discounted = [], 0.0
        for r, m in zip(reversed(memory.rewards), reversed(memory.masks)):
            discounted = r + self.gamma * discounted * (1 - m)
            rewards.insert(0, discounted)
        rewards = torch.tensor(rewards, device=device)
        rewards = (rewards - rewards.mean()) / (rewards.std() + 1e-5)
        old_states = torch.stack(memory.states).to(device)
        old_actions = torch.stack(memory.actions).to(device)
        old_logprobs = torch.stack(memory.logprobs).to(device).detach()
        for _ in range(self.k_epochs):
            logprobs, values, entropy = self.policy.evaluate(old_states, old_actions)
            ratios = torch.exp(logprobs - old_logprobs)
            adv = rewards - values.detach()
            surr = torch.min(ratios * adv, torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * adv)
            loss = -surr + 0.5 * self.mse(values, rewards) - 0.01 * entropy
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()
        self.policy_old.load_state_dict(self.policy.state_dict())


def train(env, ppo, max_episodes=3000, max_timesteps=500, update_timestep=2000):
    memory = Memory()
    timestep = 0
    for episode in range(1, max_episodes + 1):
        state = env.reset()
        for t in range(max_timesteps):
            timestep += 1
            action = ppo.select_action(np.asarray(state), memory)
            state, reward, done, _ = env.step(action)
            memory.rewards.append(reward)
            memory.masks.append(float(done))
            if timestep % update_timestep == 0:
                ppo.update(memory)
                memory.clear_memory()
            if done:
                break
