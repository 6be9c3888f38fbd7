# Source: https://github.com/vwxyzjn/cleanrl/blob/master/cleanrl/ppo_atari_lstm.py
# Report: PPO-LSTM rollout written without the torch.no_grad() that cleanrl puts around the rollout's policy call
# Shape: next_state = agent.act(obs, next_state, done) is loop-carried and graph-attached: the LSTM graph chains over every step of every rollout (clone() keeps it); value/logp copied into the outer storages attach them too
# Expect: TML005 line 53; TML001 lines 54, 56
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical


class RecurrentAgent(nn.Module):
    def __init__(self, obs_dim, n_actions, hid=128):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 256), nn.ReLU())
        self.lstm = nn.LSTM(256, hid)
        self.pi = nn.Linear(hid, n_actions)
        self.v = nn.Linear(hid, 1)

    def unroll(self, x, state, done):
        z = self.encoder(x)
        n_envs = state[0].shape[1]
        z = z.reshape((-1, n_envs, self.lstm.input_size))
        done = done.reshape((-1, n_envs))
        outs = []
        for zt, dt in zip(z, done):
            keep = (1.0 - dt).view(1, -1, 1)
            o, state = self.lstm(zt.unsqueeze(0), (keep * state[0], keep * state[1]))
            outs.append(o)
        return torch.flatten(torch.cat(outs), 0, 1), state

    def act(self, x, state, done, action=None):
        h, state = self.unroll(x, state, done)
        dist = Categorical(logits=self.pi(h))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.v(h), state


def train(envs, agent, optimizer, n_iters, n_steps, n_envs, obs_dim, device):
    obs_buf = torch.zeros((n_steps, n_envs, obs_dim), device=device)
    act_buf = torch.zeros((n_steps, n_envs), device=device)
    logp_buf = torch.zeros((n_steps, n_envs), device=device)
    val_buf = torch.zeros((n_steps, n_envs), device=device)
    done_buf = torch.zeros((n_steps, n_envs), device=device)
    next_obs = torch.as_tensor(envs.reset(), dtype=torch.float32, device=device)
    next_done = torch.zeros(n_envs, device=device)
    next_state = (torch.zeros(1, n_envs, 128, device=device), torch.zeros(1, n_envs, 128, device=device))

    for it in range(n_iters):
        start_state = (next_state[0].clone(), next_state[1].clone())
        for step in range(n_steps):
            obs_buf[step] = next_obs
            done_buf[step] = next_done
            action, logp, _, value, next_state = agent.act(next_obs, next_state, next_done)  # expect: TML005
            val_buf[step] = value.flatten()  # expect: TML001
            act_buf[step] = action
            logp_buf[step] = logp  # expect: TML001
            o, r, d, _ = envs.step(action.cpu().numpy())
            next_obs = torch.as_tensor(o, dtype=torch.float32, device=device)
            next_done = torch.as_tensor(d, dtype=torch.float32, device=device)

        _, new_logp, ent, new_v, _ = agent.act(obs_buf.reshape(-1, obs_dim), start_state,
                                              done_buf.reshape(-1), act_buf.reshape(-1).long())
        ratio = (new_logp - logp_buf.reshape(-1)).exp()
        loss = -(ratio * (val_buf.reshape(-1) - new_v.view(-1)).detach()).mean() - 0.01 * ent.mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        optimizer.step()
        print(it, loss.item())
