# Source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/blob/3b2c40c1d8bd57513d254be979d9320077c62ca8/Char05%20DDPG/DDPG.py
# Report: audit of a DDPG Pendulum agent whose select_action() returns actor(state).cpu().data.numpy() before the transition is pushed into the list-based Replay_buffer; in the same spirit as the repo, the action pushed into the buffer is a detached CPU copy, so stored transitions hold plain data and no actor graph
# Shape: DDPG class with a Replay_buffer (list with overwrite pointer) whose push() keeps the tuple; select_action() returns a tensor; the collection loop pushes (state, next_state, action.detach().cpu(), reward, done) every env step and sample() stacks (and detaches) the stored actions
# Expect: near-miss: must be silent
import numpy as np
import gym
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"


class ReplayBuffer:
    def __init__(self, max_size=100000):
        self.storage, self.max_size, self.ptr = [], max_size, 0

    def push(self, transition):
        if len(self.storage) == self.max_size:
            self.storage[self.ptr] = transition
            self.ptr = (self.ptr + 1) % self.max_size
        else:
            self.storage.append(transition)

    def sample(self, batch_size):
        idx = np.random.randint(0, len(self.storage), size=batch_size)
        s, s2, a, r, d = zip(*[self.storage[i] for i in idx])
        as_t = lambda x: torch.as_tensor(np.array(x), dtype=torch.float32, device=device)
        return as_t(s), as_t(s2), torch.stack(a).detach().to(device), as_t(r).unsqueeze(1), as_t(d).unsqueeze(1)


class DDPG:
    def __init__(self, actor, critic, actor_target, critic_target, lr=1e-3, gamma=0.99, tau=0.005):
        self.actor, self.critic = actor.to(device), critic.to(device)
        self.actor_target, self.critic_target = actor_target.to(device), critic_target.to(device)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr)
        self.gamma, self.tau = gamma, tau
        self.replay_buffer = ReplayBuffer()

    def select_action(self, state, noise=0.1):
        state = torch.as_tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        action = self.actor(state).squeeze(0)
        return action + noise * torch.randn_like(action)

    def update(self, iterations=10, batch_size=64):
        for _ in range(iterations):
            s, s2, a, r, d = self.replay_buffer.sample(batch_size)
            with torch.no_grad():
                target_q = r + (1 - d) * self.gamma * self.critic_target(s2, self.actor_target(s2))
            critic_loss = F.mse_loss(self.critic(s, a), target_q)
            self.critic_opt.zero_grad()
            critic_loss.backward()
            self.critic_opt.step()
            actor_loss = -self.critic(s, self.actor(s)).mean()
            self.actor_opt.zero_grad()
            actor_loss.backward()
            self.actor_opt.step()
            with torch.no_grad():
                for net, target in ((self.critic, self.critic_target), (self.actor, self.actor_target)):
                    for p, tp in zip(net.parameters(), target.parameters()):
                        tp.mul_(1 - self.tau).add_(self.tau * p)
        return critic_loss.item(), actor_loss.item()


def train(agent, env_name="Pendulum-v1", episodes=2000, max_steps=200, warmup=1000):
    env = gym.make(env_name)
    total_steps = 0
    for episode in range(episodes):
        state, _ = env.reset()
        ep_reward = 0.0
        for t in range(max_steps):
            action = agent.select_action(state)
            action = action.detach().cpu()
            next_state, reward, terminated, truncated, _ = env.step(action.numpy())
            agent.replay_buffer.push((state, next_state, action, reward, float(terminated)))
            state = next_state
            ep_reward += reward
            total_steps += 1
            if terminated or truncated:
                break
        if total_steps >= warmup:
            critic_loss, actor_loss = agent.update()
            print(f"episode {episode}: reward {ep_reward:.1f} critic {critic_loss:.3f} actor {actor_loss:.3f}")
