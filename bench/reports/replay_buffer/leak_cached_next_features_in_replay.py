# Source: https://taourl.com/read-2512883.html
# Report: memory leaks in RL training with image observations: replay buffers that keep PyTorch tensors referenced make memory grow with every stored transition; tensors should be detached and moved to the CPU before they are kept
# Shape: a pixel DQN agent caches the encoder features of the next frame (computed with autograd on, for acting) and pushes them into its ring buffer, so each of up to 100k transitions pins one encoder forward graph
# Expect: TML001 line 71
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class RingBuffer:
    def __init__(self, capacity):
        self.capacity, self.storage, self.pos = capacity, [], 0

    def push(self, *transition):
        if len(self.storage) < self.capacity:
            self.storage.append(transition)
        else:
            self.storage[self.pos] = transition
        self.pos = (self.pos + 1) % self.capacity

    def sample(self, n, device):
        obs, actions, rewards, next_feats, dones = zip(*random.sample(self.storage, n))
        as_t = lambda xs, dt: torch.as_tensor(xs, dtype=dt, device=device)
        return (torch.stack([torch.as_tensor(o) for o in obs]).to(device), as_t(actions, torch.long),
                as_t(rewards, torch.float32), torch.cat(next_feats).to(device), as_t(dones, torch.float32))

    def __len__(self):
        return len(self.storage)


class PixelDQN:
    def __init__(self, encoder, q_head, target_head, n_actions, device="cuda", gamma=0.99):
        self.encoder, self.q_head, self.target_head = encoder, q_head, target_head
        self.n_actions, self.device, self.gamma = n_actions, device, gamma
        self.buffer = RingBuffer(100_000)
        self.opt = torch.optim.Adam(list(encoder.parameters()) + list(q_head.parameters()), lr=1e-4)

    def encode(self, frames):
        x = torch.as_tensor(frames, device=self.device).float().div(255.0)
        return self.encoder(x if x.dim() == 4 else x.unsqueeze(0))

    def act(self, feat, eps):
        if random.random() < eps:
            return random.randrange(self.n_actions)
        return int(self.q_head(feat).argmax(dim=1).item())

    def learn(self, batch_size=32):
        if len(self.buffer) < 10 * batch_size:
            return None
        obs, actions, rewards, next_feats, dones = self.buffer.sample(batch_size, self.device)
        q = self.q_head(self.encode(obs)).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = rewards + self.gamma * (1 - dones) * self.target_head(next_feats).max(dim=1).values
        loss = F.smooth_l1_loss(q, target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run_episode(env, agent, eps):
    obs = env.reset()
    feat = agent.encode(obs)
    done, ep_return = False, 0.0
    while not done:
        action = agent.act(feat, eps)
        next_obs, reward, done, _ = env.step(action)
        next_feat = agent.encode(next_obs)
        agent.buffer.push(obs, action, reward, next_feat, done)  # expect: TML001
        agent.learn()
        obs, feat = next_obs, next_feat
        ep_return += reward
    return ep_return
