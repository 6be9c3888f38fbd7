# Source: https://github.com/medipixel/rl_algorithms/issues/56
# Report: "memory leak issue on sac and td3": the fix (commit 173476d, later .item() in rl_algorithms/sac/learner.py) makes update_model return plain numbers instead of loss tensors
# Shape: update_model returns the five losses as Python floats via .item(), so loss_episode.append keeps no tensor or graph
# Expect: near-miss: must be silent

import argparse
from typing import Tuple

import gym
import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim
import wandb

import algorithms.utils as common_utils
from algorithms.abstract_agent import AbstractAgent
from algorithms.replay_buffer import ReplayBuffer
from algorithms.sac.model import Actor, Qvalue, Value

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

hyper_params = {
    "GAMMA": 0.99,
    "TAU": 1e-3,
    "LR_ACTOR": 3e-4,
    "LR_VF": 3e-4,
    "LR_QF": 3e-4,
    "LR_ENTROPY": 3e-4,
    "DELAYED_UPDATE": 2,
    "BUFFER_SIZE": int(1e6),
    "BATCH_SIZE": 128,
}


class Agent(AbstractAgent):
    """SAC agent interacting with environment."""

    def __init__(self, env: gym.Env, args: argparse.Namespace):
        AbstractAgent.__init__(self, env, args)
        self.n_step = 0
        self.actor = Actor(self.state_dim, self.action_dim).to(device)
        self.vf = Value(self.state_dim).to(device)
        self.vf_target = Value(self.state_dim).to(device)
        self.vf_target.load_state_dict(self.vf.state_dict())
        self.qf_1 = Qvalue(self.state_dim, self.action_dim).to(device)
        self.qf_2 = Qvalue(self.state_dim, self.action_dim).to(device)
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=hyper_params["LR_ACTOR"])
        self.vf_optimizer = optim.Adam(self.vf.parameters(), lr=hyper_params["LR_VF"])
        self.qf_1_optimizer = optim.Adam(self.qf_1.parameters(), lr=hyper_params["LR_QF"])
        self.qf_2_optimizer = optim.Adam(self.qf_2.parameters(), lr=hyper_params["LR_QF"])
        self.target_entropy = -np.prod((self.action_dim,)).item()
        self.log_alpha = torch.zeros(1, requires_grad=True, device=device)
        self.alpha_optimizer = optim.Adam([self.log_alpha], lr=hyper_params["LR_ENTROPY"])
        self.memory = ReplayBuffer(hyper_params["BUFFER_SIZE"], hyper_params["BATCH_SIZE"], args.seed)

    def update_model(self, experiences: Tuple[torch.Tensor, ...]) -> Tuple[float, ...]:
        """Train the model after each episode."""
        states, actions, rewards, next_states, dones = experiences
        new_actions, log_prob, pre_tanh_value, mu, std = self.actor(states)

        alpha_loss = (-self.log_alpha * (log_prob + self.target_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        alpha = self.log_alpha.exp()

        masks = 1 - dones
        q_1_pred = self.qf_1(states, actions)
        q_2_pred = self.qf_2(states, actions)
        v_target = self.vf_target(next_states)
        q_target = rewards + hyper_params["GAMMA"] * v_target * masks
        qf_1_loss = F.mse_loss(q_1_pred, q_target.detach())
        qf_2_loss = F.mse_loss(q_2_pred, q_target.detach())

        v_pred = self.vf(states)
        q_pred = torch.min(self.qf_1(states, new_actions), self.qf_2(states, new_actions))
        vf_loss = F.mse_loss(v_pred, (q_pred - alpha * log_prob).detach())

        self.qf_1_optimizer.zero_grad()
        qf_1_loss.backward()
        self.qf_1_optimizer.step()
        self.qf_2_optimizer.zero_grad()
        qf_2_loss.backward()
        self.qf_2_optimizer.step()
        self.vf_optimizer.zero_grad()
        vf_loss.backward()
        self.vf_optimizer.step()

        if self.n_step % hyper_params["DELAYED_UPDATE"] == 0:
            advantage = q_pred - v_pred.detach()
            actor_loss = (alpha * log_prob - advantage).mean()
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()
            common_utils.soft_update(self.vf, self.vf_target, hyper_params["TAU"])
        else:
            actor_loss = torch.zeros(1)

        return actor_loss.item(), qf_1_loss.item(), qf_2_loss.item(), vf_loss.item(), alpha_loss.item()

    def train(self):
        """Train the agent."""
        self.n_step = 0
        for i_episode in range(1, self.args.episode_num + 1):
            state = self.env.reset()
            done = False
            score = 0
            loss_episode = list()

            while not done:
                action = self.select_action(state)
                next_state, reward, done = self.step(action)

                if len(self.memory) >= hyper_params["BATCH_SIZE"]:
                    experiences = self.memory.sample()
                    loss = self.update_model(experiences)
                    loss_episode.append(loss)

                state = next_state
                score += reward
                self.n_step += 1

            if loss_episode:
                avg_loss = np.vstack(loss_episode).mean(axis=0)
                print("[INFO] episode %d total score: %d, total loss: %f" % (i_episode, score, avg_loss.sum()))
                if self.args.log:
                    wandb.log({"score": score, "total_loss": avg_loss.sum(), "qf_1 loss": avg_loss[1]})
