# Source: https://github.com/C0nF1D3nt/MARL-on-VMAS/blob/9499de0645c4e2ce9e83b280fdb576fa1c46298a/MARL/IPPO/utils_ppo.py
# Report: audit of the VMAS IPPO agent: select_action samples under torch.no_grad and take_action returns detached action/log-prob before they go into the rollout Memory; this is the variant it avoids, where the log-prob keeps the actor graph for all 1000 steps until learn()
# Shape: ActorCritic.take_action returns (action, log_prob) straight from the Gaussian; IPPO.select_action runs it with grad on and appends log_prob to self.memory, which learn() only stacks and detaches every learn_freq steps across episodes
# Expect: TML001 line 51
import torch
import torch.nn as nn


class Memory:
    def __init__(self):
        self.clear()
    def clear(self):
        self.states, self.actions, self.log_probs = [], [], []
        self.rewards, self.done = [], []


class ActorCritic(nn.Module):
    def __init__(self, state_dim, action_dim, std=0.5):
        super().__init__()
        self.action_var = torch.full((action_dim,), std * std)
        self.actor = nn.Sequential(nn.Linear(state_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, action_dim))
        self.critic = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(), nn.Linear(64, 1))

    def take_action(self, state):
        mean = self.actor(state)
        dist = torch.distributions.MultivariateNormal(mean, torch.diag(self.action_var).unsqueeze(0))
        action = dist.sample()
        return action, dist.log_prob(action)

    def evaluate(self, state, action):
        mean = self.actor(state)
        dist = torch.distributions.MultivariateNormal(mean, torch.diag_embed(self.action_var.expand_as(mean)))
        return dist.log_prob(action), self.critic(state).squeeze(-1), dist.entropy()


class IPPO:
    def __init__(self, state_dim, action_dim, lr=5e-5, gamma=0.99, epochs=100, eps=0.2):
        self.gamma, self.epochs, self.eps = gamma, epochs, eps
        self.memory = Memory()
        self.policy = ActorCritic(state_dim, action_dim)
        self.policy_old = ActorCritic(state_dim, action_dim)
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.mse = nn.MSELoss()

    def select_action(self, state):
        state = torch.as_tensor(state, dtype=torch.float32)
        action, log_prob = self.policy_old.take_action(state)
        self.memory.states.append(state)
        self.memory.actions.append(action)
        self.memory.log_probs.append(log_prob)  # expect: TML001
        return action.flatten()

    def learn(self):
        states = torch.stack(self.memory.states).squeeze().detach()
        actions = torch.stack(self.memory.actions).squeeze().detach()
        old_log_probs = torch.stack(self.memory.log_probs).squeeze().detach()
        returns, running = [], 0.0
        for r, done in zip(reversed(self.memory.rewards), reversed(self.memory.done)):
            running = r + self.gamma * running * (0.0 if done else 1.0)
            returns.insert(0, running)
        returns = torch.tensor(returns)
        for _ in range(self.epochs):
            log_probs, values, entropy = self.policy.evaluate(states, actions)
            ratios = torch.exp(log_probs - old_log_probs)
            adv = returns - values.detach()
            surr = torch.min(ratios * adv, torch.clamp(ratios, 1 - self.eps, 1 + self.eps) * adv)
            loss = -surr + 0.5 * self.mse(values, returns) - 0.01 * entropy
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.memory.clear()


def train_agent(env, agent, max_step=1_000_000, episode_len=200, learn_freq=1000):
    step = 0
    while step < max_step:
        obs = env.reset()
        for _ in range(episode_len):
            action = agent.select_action(torch.cat([o.squeeze() for o in obs]))
            obs, reward, done, _ = env.step([action[:2].clamp(-1, 1).unsqueeze(0), action[2:].clamp(-1, 1).unsqueeze(0)])
            agent.memory.rewards.append((float(reward[0][0]) + float(reward[1][0])) / 2)
            agent.memory.done.append(bool(done[0]))
            step += 1
            if step % learn_freq == 0:
                agent.learn()
            if done[0]:
                break
