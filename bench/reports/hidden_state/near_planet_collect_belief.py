# Source: https://github.com/Kaixhin/PlaNet/blob/master/main.py
# Report: PlaNet alternates model fitting with data collection; the collection loop carries the RSSM belief/state through a helper, inside torch.no_grad()
# Shape: belief/posterior_state are loop-carried through update_belief_and_act(); the caller's `with torch.no_grad()` keeps them detached, fitting losses are kept as .item()
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F


class Replay:
    def __init__(self, size):
        self.obs, self.acts, self.rews, self.idx = [None] * size, [None] * size, np.zeros(size), 0

    def append(self, obs, act, rew, done):
        self.obs[self.idx] = obs.numpy()
        self.acts[self.idx] = act.numpy()
        self.rews[self.idx] = rew
        self.idx = (self.idx + 1) % len(self.obs)


def act_in_env(cfg, env, planner, dynamics, encoder, belief, post_state, action, obs, explore):
    # one filtering step of the latent model, then plan an action from the new belief
    belief, post_state = dynamics(post_state, action, belief, encoder(obs))
    action = planner(belief, post_state)
    if explore:
        action = action + cfg.noise * torch.randn_like(action)
    nxt, rew, done = env.step(action[0].cpu())
    return belief, post_state, action, nxt, rew, done


def fit_world_model(cfg, replay_sample, dynamics, decoder, reward_head, encoder, opt, params):
    losses = []
    for _ in range(cfg.collect_interval):
        obs, acts, rews = replay_sample(cfg.batch_size, cfg.chunk)
        beliefs, states, kl = dynamics.rollout(acts, encoder(obs))
        obs_loss = F.mse_loss(decoder(beliefs, states), obs)
        rew_loss = F.mse_loss(reward_head(beliefs, states), rews)
        opt.zero_grad()
        (obs_loss + rew_loss + kl).backward()
        nn.utils.clip_grad_norm_(params, cfg.clip)
        opt.step()
        losses.append([obs_loss.item(), rew_loss.item(), kl.item()])
    return losses


def run(cfg, env, replay, dynamics, decoder, reward_head, encoder, planner):
    params = list(dynamics.parameters()) + list(decoder.parameters()) + list(reward_head.parameters()) + list(encoder.parameters())
    opt = optim.Adam(params, lr=cfg.lr)
    history = {"losses": [], "train_rewards": []}
    for episode in range(cfg.episodes):
        history["losses"].append(fit_world_model(cfg, replay.sample, dynamics, decoder, reward_head, encoder, opt, params))

        with torch.no_grad():
            obs, total_reward = env.reset(), 0.0
            belief = torch.zeros(1, cfg.belief_size, device=cfg.device)
            post_state = torch.zeros(1, cfg.state_size, device=cfg.device)
            action = torch.zeros(1, env.action_size, device=cfg.device)
            for t in range(cfg.max_len):
                belief, post_state, action, nxt, rew, done = act_in_env(
                    cfg, env, planner, dynamics, encoder, belief, post_state, action, obs.to(cfg.device), True)
                replay.append(obs, action.cpu(), rew, done)
                total_reward += rew
                obs = nxt
                if done:
                    break
        history["train_rewards"].append(total_reward)
    return history
