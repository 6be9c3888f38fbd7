# Source: https://github.com/Bigpig4396/PyTorch-Counterfactual-Multi-Agent-Policy-Gradients-COMA/issues/4
# Report: running COMA2.py leaks memory until the program takes all memory after some episodes; the reporter traced it to cross_prod in the critic target and avoided it with torch.no_grad() (source note: code: COMA2.py @ 41f41e451991c7281d2912406caf3d053aab432f)
# Shape: the TD target Q_est[t] reads the next row Q_est[t + 1] and the joint policy cross_prod(pi_a1, pi_a2) of attached actor outputs, so each row chains onto the previous graph for the whole episode
# Expect: TML005 line 48
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical


class Actor(nn.Module):
    def __init__(self, n_action):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3)
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, n_action)

    def get_action(self, obs):
        h = F.relu(self.conv1(obs)).flatten(1)
        pi = F.softmax(self.fc2(F.relu(self.fc1(h))), dim=1)
        return Categorical(pi.squeeze(0)).sample().item(), pi


class COMA(object):
    def __init__(self, n_action, critic):
        self.n_action = n_action
        self.actor1 = Actor(n_action)
        self.actor2 = Actor(n_action)
        self.critic = critic
        self.gamma = 0.95
        self.c_loss_fn = nn.MSELoss()
        self.c_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def cross_prod(self, pi_a1, pi_a2):
        new_pi = torch.zeros(1, self.n_action * self.n_action)
        for i in range(self.n_action):
            for j in range(self.n_action):
                new_pi[0, i * self.n_action + j] = pi_a1[0, i] * pi_a2[0, j]
        return new_pi

    def train_critic(self, obs1, obs2, a1_list, a2_list, pi_a1_list, pi_a2_list, r_list):
        T = len(r_list)
        Q = self.critic.get_value(obs1, obs2)
        Q_est = Q.clone()
        for t in range(T - 1):
            a_index = a1_list[t] * self.n_action + a2_list[t]
            joint_pi = self.cross_prod(pi_a1_list[t + 1], pi_a2_list[t + 1])
            Q_est[t][a_index] = r_list[t] + self.gamma * torch.sum(joint_pi * Q_est[t + 1, :])  # expect: TML005
        last = a1_list[T - 1] * self.n_action + a2_list[T - 1]
        Q_est[T - 1][last] = r_list[T - 1]
        c_loss = self.c_loss_fn(Q, Q_est.detach())
        self.c_optimizer.zero_grad()
        c_loss.backward()
        self.c_optimizer.step()
        return Q.detach()

    def actor_loss(self, Q, a1_list, a2_list, pi_a1_list):
        A1_list = []
        for t in range(len(a1_list)):
            row = Q[t].view(self.n_action, self.n_action)[:, a2_list[t]]
            a_index = a1_list[t] * self.n_action + a2_list[t]
            A1_list.append((Q[t, a_index] - torch.sum(pi_a1_list[t] * row)).item())
        a1_loss = torch.zeros(1)
        for t in range(len(a1_list)):
            a1_loss = a1_loss + A1_list[t] * torch.log(pi_a1_list[t][0, a1_list[t]])
        return -a1_loss / len(a1_list)


def run(env, agent, to_tensor, max_epi_iter=1000, max_mc_iter=200):
    train_curve = []
    for epi_iter in range(max_epi_iter):
        env.reset()
        o1_list, a1_list, pi_a1_list, o2_list, a2_list, pi_a2_list, r_list = [], [], [], [], [], [], []
        for mc_iter in range(max_mc_iter):
            obs1, obs2 = env.get_agt1_obs(), env.get_agt2_obs()
            action1, pi_a1 = agent.actor1.get_action(to_tensor(obs1))
            action2, pi_a2 = agent.actor2.get_action(to_tensor(obs2))
            o1_list.append(obs1)
            o2_list.append(obs2)
            a1_list.append(action1)
            a2_list.append(action2)
            pi_a1_list.append(pi_a1)
            pi_a2_list.append(pi_a2)
            [reward_1, _], done = env.step([action1, action2])
            r_list.append(reward_1)
            if done:
                break
        obs1 = torch.cat([to_tensor(o) for o in o1_list])
        obs2 = torch.cat([to_tensor(o) for o in o2_list])
        Q = agent.train_critic(obs1, obs2, a1_list, a2_list, pi_a1_list, pi_a2_list, r_list)
        agent.actor_loss(Q, a1_list, a2_list, pi_a1_list).backward()
        train_curve.append(sum(r_list) / (mc_iter + 1))
    return train_curve
