# Source: https://github.com/yfeng997/MadMario/blob/master/agent.py
# Report: Double-DQN Mario agent (repo correct: update_Q_online() returns loss.item()); the realistic slip is returning the loss tensor itself, which the per-step MetricLogger then sums for the whole episode and appends per episode
# Shape: update_Q_online() returns the graph-attached loss, learn() passes it on, logger.log_step() does self.curr_ep_loss += loss on a logger that lives for the run and log_episode() appends the summed tensor to ep_avg_losses forever
# Expect: TML001 line 95
import random
from collections import deque

import numpy as np
import torch


class MetricLogger:
    def __init__(self):
        self.ep_rewards, self.ep_avg_losses, self.ep_avg_qs = [], [], []
        self.init_episode()

    def init_episode(self):
        self.curr_ep_reward = 0.0
        self.curr_ep_loss = 0.0
        self.curr_ep_q = 0.0
        self.curr_ep_loss_length = 0

    def log_step(self, reward, loss, q):
        self.curr_ep_reward += reward
        if loss:
            self.curr_ep_loss += loss
            self.curr_ep_q += q
            self.curr_ep_loss_length += 1

    def log_episode(self):
        self.ep_rewards.append(self.curr_ep_reward)
        n = max(self.curr_ep_loss_length, 1)
        self.ep_avg_losses.append(self.curr_ep_loss / n)
        self.ep_avg_qs.append(self.curr_ep_q / n)
        self.init_episode()


class Mario:
    def __init__(self, net, action_dim, batch_size=32, gamma=0.9):
        self.net = net.cuda()
        self.action_dim = action_dim
        self.memory = deque(maxlen=100000)
        self.batch_size = batch_size
        self.gamma = gamma
        self.curr_step = 0
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=0.00025)
        self.loss_fn = torch.nn.SmoothL1Loss()

    def cache(self, state, next_state, action, reward, done):
        self.memory.append((torch.FloatTensor(state).cuda(), torch.FloatTensor(next_state).cuda(),
                            torch.LongTensor([action]).cuda(), torch.DoubleTensor([reward]).cuda(),
                            torch.BoolTensor([done]).cuda()))

    def recall(self):
        batch = random.sample(self.memory, self.batch_size)
        state, next_state, action, reward, done = map(torch.stack, zip(*batch))
        return state, next_state, action.squeeze(), reward.squeeze(), done.squeeze()

    def td_estimate(self, state, action):
        return self.net(state, model="online")[np.arange(self.batch_size), action]

    @torch.no_grad()
    def td_target(self, reward, next_state, done):
        best_action = torch.argmax(self.net(next_state, model="online"), axis=1)
        next_q = self.net(next_state, model="target")[np.arange(self.batch_size), best_action]
        return (reward + (1 - done.float()) * self.gamma * next_q).float()

    def update_Q_online(self, td_estimate, td_target):
        loss = self.loss_fn(td_estimate, td_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss

    def learn(self):
        self.curr_step += 1
        if self.curr_step < 1000 or self.curr_step % 3 != 0:
            return None, None
        state, next_state, action, reward, done = self.recall()
        td_est = self.td_estimate(state, action)
        td_tgt = self.td_target(reward, next_state, done)
        loss = self.update_Q_online(td_est, td_tgt)
        return td_est.mean().item(), loss


def train(env, mario, episodes=40000):
    logger = MetricLogger()
    for e in range(episodes):
        state = env.reset()
        while True:
            action = env.action_space.sample()
            next_state, reward, done, info = env.step(action)
            mario.cache(state, next_state, action, reward, done)
            q, loss = mario.learn()
            logger.log_step(reward, loss, q)  # expect: TML001
            state = next_state
            if done or info["flag_get"]:
                break
        logger.log_episode()
