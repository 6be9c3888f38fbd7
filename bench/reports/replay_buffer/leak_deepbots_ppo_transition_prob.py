# Source: https://github.com/aidudezzz/deepbots-tutorials/issues/18
# Report: user of the deepbots PPO tutorial (camera images as state) sees memory keep increasing during training; the tutorial's PPOAgent keeps every step's Transition in self.buffer until trainStep() at the end of the episode
# Shape: leak = work() without its no_grad block and returning the probability as a tensor (no .item()); each step's graph-attached prob is passed to store_transition(), whose body appends it to the persistent self.buffer, so the actor graph of every step of the episode (camera-image inputs) stays alive until train_step()
# Expect: TML001 line 77
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler

Transition = namedtuple("Transition", ["state", "action", "a_log_prob", "reward", "next_state"])


class PPOAgent:
    def __init__(self, actor: nn.Module, critic: nn.Module, clip_param=0.2, ppo_update_iters=5,
                 batch_size=8, gamma=0.99, use_cuda=True):
        self.actor_net, self.critic_net = actor, critic
        self.clip_param, self.ppo_update_iters = clip_param, ppo_update_iters
        self.batch_size, self.gamma, self.use_cuda = batch_size, gamma, use_cuda
        if use_cuda:
            self.actor_net.cuda()
            self.critic_net.cuda()
        self.actor_optimizer = torch.optim.Adam(self.actor_net.parameters(), 1e-3)
        self.critic_optimizer = torch.optim.Adam(self.critic_net.parameters(), 3e-3)
        self.buffer = []

    def work(self, agent_input):
        agent_input = torch.from_numpy(np.array(agent_input)).float().unsqueeze(0)
        if self.use_cuda:
            agent_input = agent_input.cuda()
        action_prob = self.actor_net(agent_input)
        action = Categorical(action_prob).sample()
        return action.item(), action_prob[:, action.item()]

    def store_transition(self, transition):
        self.buffer.append(transition)

    def train_step(self):
        if len(self.buffer) < self.batch_size:
            return
        state = torch.tensor(np.array([t.state for t in self.buffer]), dtype=torch.float)
        action = torch.tensor([t.action for t in self.buffer], dtype=torch.long).view(-1, 1)
        old_prob = torch.cat([t.a_log_prob for t in self.buffer]).detach().view(-1, 1)
        returns, running = [], 0.0
        for r in [t.reward for t in self.buffer][::-1]:
            running = r + self.gamma * running
            returns.insert(0, running)
        gt = torch.tensor(returns, dtype=torch.float)
        if self.use_cuda:
            state, action, old_prob, gt = state.cuda(), action.cuda(), old_prob.cuda(), gt.cuda()
        for _ in range(self.ppo_update_iters):
            for index in BatchSampler(SubsetRandomSampler(range(len(self.buffer))), self.batch_size, False):
                gt_index = gt[index].view(-1, 1)
                value = self.critic_net(state[index])
                advantage = (gt_index - value).detach()
                ratio = self.actor_net(state[index]).gather(1, action[index]) / old_prob[index]
                surr = torch.min(ratio * advantage,
                                 torch.clamp(ratio, 1 - self.clip_param, 1 + self.clip_param) * advantage)
                self.actor_optimizer.zero_grad()
                (-surr.mean()).backward()
                self.actor_optimizer.step()
                self.critic_optimizer.zero_grad()
                F.mse_loss(gt_index, value).backward()
                self.critic_optimizer.step()
        del self.buffer[:]


def run(supervisor, agent: PPOAgent, episode_limit=2000, steps_per_episode=200):
    for episode in range(episode_limit):
        observation = supervisor.reset()
        for step in range(steps_per_episode):
            selected_action, action_prob = agent.work(observation)
            new_observation, reward, done, info = supervisor.step([selected_action])
            agent.store_transition(Transition(observation, selected_action, action_prob, reward, new_observation))  # expect: TML001
            observation = new_observation
            if done:
                break
        agent.train_step()
