# Source: https://github.com/JoshuaWu1997/PyTorch-DDPG-Stock-Trading/blob/6bc7a4ce293eadb790d748835fafccb6f487f8a6/DDPG.py
# Report: DDPG portfolio agent keeps its replay buffer as preallocated CUDA tensors; act() turns the target actor's output into a share allocation with `.data` (written here as .detach()) before it is stored (issue #1 asked for exactly this).
# Shape: the allocation is detached right at the actor call, so self.action and the replay_action row written by perceive() hold plain values; the critic loss is reduced with .item() before it is logged.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn

cuda = torch.device("cuda")


class ActorNet(nn.Module):
    def __init__(self, n_in, hid, n_out):
        super().__init__()
        self.nn = nn.Sequential(nn.Linear(n_in, hid), nn.ReLU(), nn.Linear(hid, n_out), nn.Softmax(dim=1))

    def forward(self, x):
        return self.nn(x)


class StockDDPG:
    def __init__(self, n_assets, window, hid=64, unit=100, capacity=1000):
        self.unit = unit
        self.window = window
        self.actor = ActorNet(n_assets * window, hid, n_assets).to(cuda)
        self.target = ActorNet(n_assets * window, hid, n_assets).to(cuda)
        self.target.load_state_dict(self.actor.state_dict())
        self.critic = nn.Sequential(nn.Linear(2 * n_assets, hid), nn.Tanh(), nn.Linear(hid, 1)).to(cuda)
        self.c_opt = torch.optim.Adam(self.critic.parameters())
        self.capacity = capacity
        self.replay_state = torch.zeros((capacity, n_assets), device=cuda)
        self.replay_action = torch.zeros((capacity, n_assets), device=cuda)
        self.replay_reward = torch.zeros((capacity,), device=cuda)
        self.steps = 0
        self.action = torch.zeros(n_assets, device=cuda)

    @torch.no_grad()
    def sample_batch(self, batch_size):
        n = min(self.steps, self.capacity)
        idx = torch.randint(0, n, (batch_size,), device=cuda)
        sa = torch.cat([self.replay_state[idx], self.replay_action[idx] / self.unit], dim=1)
        return sa, self.replay_reward[idx]

    def train_on_batch(self, batch_size=64):
        sa, rewards = self.sample_batch(batch_size)
        loss = nn.functional.mse_loss(self.critic(sa).view(-1), rewards)
        self.c_opt.zero_grad()
        loss.backward()
        self.c_opt.step()
        return loss.item()

    def perceive(self, state, action, reward):
        slot = self.steps % self.capacity
        self.replay_state[slot] = state
        self.replay_action[slot] = action
        self.replay_reward[slot] = reward
        self.steps += 1

    def act(self, history, prices, portfolio):
        if self.steps > self.window:
            allocation = self.target(history.view(1, -1)).detach().view(-1)
            allocation += 0.01 * torch.randn_like(allocation)
            allocation[allocation < 0] = 0
            allocation /= allocation.sum()
            self.action = torch.floor(portfolio * allocation / prices / self.unit) * self.unit
        return self.action.clone()


def backtest(agent, prices, portfolio=1e6):
    log = []
    for t in range(agent.window, prices.size(0) - 1):
        history = prices[t - agent.window:t]
        action = agent.act(history, prices[t], portfolio)
        reward = ((prices[t + 1] - prices[t]) * action).sum()
        agent.perceive(prices[t], action, reward)
        if agent.steps > 128:
            log.append(agent.train_on_batch())
    return log


if __name__ == "__main__":
    backtest(StockDDPG(n_assets=50, window=12), torch.rand(2000, 50, device=cuda) + 1.0)
