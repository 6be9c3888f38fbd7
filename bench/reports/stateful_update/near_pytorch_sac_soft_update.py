# Source: https://github.com/denisyarats/pytorch_sac/blob/master/utils.py
# Report: SAC agent whose critic target is Polyak-averaged after every update by utils.soft_update_params(), written on .data so the copy is invisible to autograd
# Shape: soft_update_params() reads and writes target_param.data / param.data (no grad tracking), the TD target is built under no_grad, and the metrics dict only gets .item() floats
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


def soft_update_params(net, target_net, tau):
    for param, target_param in zip(net.parameters(), target_net.parameters()):
        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)


def to_torch(xs, device):
    return tuple(torch.as_tensor(x, device=device) for x in xs)


class SACAgent:
    def __init__(self, actor, critic, critic_target, device, lr=1e-4, tau=0.01,
                 init_temperature=0.1, action_dim=6):
        self.device = device
        self.actor = actor.to(device)
        self.critic = critic.to(device)
        self.critic_target = critic_target.to(device)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_target_tau = tau
        self.log_alpha = torch.tensor(np.log(init_temperature), device=device, requires_grad=True)
        self.target_entropy = -action_dim
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=lr)

    @property
    def alpha(self):
        return self.log_alpha.exp()

    def update_critic(self, obs, action, reward, discount, next_obs):
        with torch.no_grad():
            dist = self.actor(next_obs)
            next_action = dist.sample()
            next_log_prob = dist.log_prob(next_action).sum(-1, keepdim=True)
            target_q1, target_q2 = self.critic_target(next_obs, next_action)
            target_v = torch.min(target_q1, target_q2) - self.alpha * next_log_prob
            target_q = reward + discount * target_v
        q1, q2 = self.critic(obs, action)
        critic_loss = F.mse_loss(q1, target_q) + F.mse_loss(q2, target_q)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()
        return {"critic_loss": critic_loss.item(), "critic_q1": q1.mean().item()}

    def update_actor_and_alpha(self, obs):
        dist = self.actor(obs)
        action = dist.rsample()
        log_prob = dist.log_prob(action).sum(-1, keepdim=True)
        q1, q2 = self.critic(obs, action)
        actor_loss = (self.alpha.detach() * log_prob - torch.min(q1, q2)).mean()
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()

        alpha_loss = (self.alpha * (-log_prob - self.target_entropy).detach()).mean()
        self.alpha_opt.zero_grad(set_to_none=True)
        alpha_loss.backward()
        self.alpha_opt.step()
        return {"actor_loss": actor_loss.item(), "alpha_loss": alpha_loss.item()}

    def update(self, replay_iter, step):
        obs, action, reward, discount, next_obs = to_torch(next(replay_iter), self.device)
        metrics = {"batch_reward": reward.mean().item()}
        metrics.update(self.update_critic(obs, action, reward, discount, next_obs))
        metrics.update(self.update_actor_and_alpha(obs))
        soft_update_params(self.critic, self.critic_target, self.critic_target_tau)
        return metrics


def train(agent, replay_iter, num_train_steps, writer):
    for step in range(num_train_steps):
        metrics = agent.update(replay_iter, step)
        for k, v in metrics.items():
            writer.add_scalar(f"train/{k}", v, step)
