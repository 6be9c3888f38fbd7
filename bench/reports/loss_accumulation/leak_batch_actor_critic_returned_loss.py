# Source: https://github.com/mfigura/RL-in-OpenAIGym/blob/108f3f606a9791b39fceaddfb0a58c82d7c4d1e2/Training/train_agents.py
# Report: audit of a batch actor-critic trainer: agent.update() returns the critic's last training loss tensor (after backward) and the episode loop only prints it; this variant keeps every returned loss for a learning-curve plot
# Shape: _q_update returns the attached train_loss, update() passes it back up, and train_batch appends each returned tensor to a history list that lives for the whole run
# Expect: TML001 line 81
import numpy as np
import torch
from torch import optim


class BatchActorCritic:
    def __init__(self, actor, q_net, actor_lr, q_lr, gamma=0.95, device="cuda"):
        self.device = device
        self.actor = actor.to(device)
        self.q_net = q_net.to(device)
        self.actor_opt = optim.SGD(self.actor.parameters(), lr=actor_lr)
        self.q_opt = optim.SGD(self.q_net.parameters(), lr=q_lr)
        self.gamma = gamma

    def _q_update(self, s, a, r, ns, not_done, n_epochs):
        with torch.no_grad():
            target = r + self.gamma * (self.q_net(ns).max(1).values * not_done).unsqueeze(-1)
        idx = a.long().unsqueeze(-1)
        for _ in range(n_epochs):
            q = self.q_net(s).gather(1, idx)
            train_loss = (target - q).pow(2).mean()
            self.q_opt.zero_grad()
            train_loss.backward()
            self.q_opt.step()
        return train_loss

    def _actor_update(self, s, a, r, ns, not_done):
        with torch.no_grad():
            next_v = self.q_net(ns).max(1).values * not_done
            q = self.q_net(s).gather(1, a.long().unsqueeze(-1)).squeeze(-1)
            td = r.squeeze(-1) + self.gamma * next_v - q
        dist = self.actor(s)
        loss = -(dist.log_prob(a) * td).sum()
        self.actor_opt.zero_grad()
        loss.backward()
        self.actor_opt.step()
        return loss

    def update(self, s, a, r, ns, not_done, n_epochs):
        critic_loss = self._q_update(s, a, r, ns, not_done, n_epochs)
        self._actor_update(s, a, r, ns, not_done)
        return critic_loss

    def get_action(self, obs):
        with torch.no_grad():
            state = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
            return self.actor(state).sample().item()


def to_tensor(rows, device):
    return torch.as_tensor(np.array(rows), dtype=torch.float32, device=device)


def train_batch(env, agent, n_episodes, update_every, n_epochs, device="cuda"):
    obs_buf, next_buf, act_buf, rew_buf, nd_buf = [], [], [], [], []
    ep_returns = np.zeros(n_episodes)
    critic_history = []
    n_samples = 0
    for ep in range(n_episodes):
        obs, done = env.reset(), False
        while not done:
            action = agent.get_action(obs)
            next_obs, reward, done, _ = env.step(action)
            obs_buf.append(obs); act_buf.append(action); next_buf.append(next_obs)
            rew_buf.append([reward]); nd_buf.append(not done)
            ep_returns[ep] += reward
            obs = next_obs
            n_samples += 1
        if n_samples >= update_every:
            critic_loss = agent.update(
                to_tensor(obs_buf, device), to_tensor(act_buf, device), to_tensor(rew_buf, device),
                to_tensor(next_buf, device), to_tensor(nd_buf, device), n_epochs,
            )
            for buf in (obs_buf, next_buf, act_buf, rew_buf, nd_buf):
                buf.clear()
            n_samples = 0
            critic_history.append(critic_loss)  # expect: TML001
            print(f"| Episode {ep} | return {ep_returns[ep]:.1f} | critic loss {critic_loss}")
    return agent, ep_returns, critic_history
