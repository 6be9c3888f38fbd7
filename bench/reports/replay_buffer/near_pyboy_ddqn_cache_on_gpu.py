# Source: https://github.com/lixado/PyBoy-RL/issues/1
# Report: DDQN agent for Kirby/Mario on PyBoy runs out of GPU memory after a couple of hours; GPU memory rises every step because each cached experience is turned into CUDA tensors that the replay memory keeps
# Shape: the fix the thread points to: cache() keeps CPU tensors in a bounded deque(maxlen=deque_size) and recall() moves only the sampled batch to the GPU; same agent, same play loop
# Expect: near-miss: must be silent
import random
from collections import deque

import numpy as np
import torch


class AIPlayer:
    def __init__(self, net, action_space_dim, config):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.net = net.to(device=self.device)
        self.action_space_dim = action_space_dim
        self.exploration_rate = config.exploration_rate
        self.exploration_rate_decay = config.exploration_rate_decay
        self.exploration_rate_min = config.exploration_rate_min
        self.batch_size = config.batch_size
        self.gamma = config.gamma
        self.burnin = config.burnin
        self.curr_step = 0
        self.memory = deque(maxlen=config.deque_size)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate)
        self.loss_fn = torch.nn.SmoothL1Loss()

    def act(self, state):
        if random.random() < self.exploration_rate:
            action_idx = random.randint(0, self.action_space_dim - 1)
        else:
            obs = torch.tensor(np.array(state)).float().to(device=self.device).unsqueeze(0)
            action_idx = torch.argmax(self.net(obs, model="online"), axis=1).item()
        self.exploration_rate = max(self.exploration_rate_min,
                                    self.exploration_rate * self.exploration_rate_decay)
        self.curr_step += 1
        return action_idx

    def cache(self, state, next_state, action, reward, done):
        """Store one transition in the replay memory (host side)."""
        state = torch.tensor(np.array(state)).float()
        next_state = torch.tensor(np.array(next_state)).float()
        action = torch.tensor([action])
        reward = torch.tensor([reward])
        done = torch.tensor([done])
        self.memory.append((state, next_state, action, reward, done))

    def recall(self):
        batch = random.sample(self.memory, self.batch_size)
        state, next_state, action, reward, done = (
            torch.stack(t).to(device=self.device) for t in zip(*batch))
        return state, next_state, action.squeeze(), reward.squeeze(), done.squeeze()

    @torch.no_grad()
    def td_target(self, reward, next_state, done):
        best_action = torch.argmax(self.net(next_state, model="online"), axis=1)
        rows = np.arange(0, self.batch_size)
        next_q = self.net(next_state, model="target")[rows, best_action]
        return (reward + (1 - done.float()) * self.gamma * next_q).float()

    def learn(self):
        if self.curr_step < self.burnin:
            return None, None
        state, next_state, action, reward, done = self.recall()
        td_est = self.net(state, model="online")[np.arange(0, self.batch_size), action]
        td_tgt = self.td_target(reward, next_state, done)
        loss = self.loss_fn(td_est, td_tgt)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return td_est.mean().item(), loss.item()


def play(env, player, logger, episodes):
    for episode in range(episodes):
        state = env.reset()
        while True:
            action = player.act(state)
            next_state, reward, done, info = env.step(action)
            player.cache(state, next_state, action, reward, done)
            q, loss = player.learn()
            logger.log_step(reward, loss, q)
            state = next_state
            if done:
                break
        logger.log_episode()
