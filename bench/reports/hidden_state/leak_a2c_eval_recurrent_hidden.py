# Source: https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/blob/41332b78dfb50321c29bade65f9d244387f68a60/evaluation.py
# Report: variant the a2c/ppo/acktr evaluate() avoided: its periodic evaluation feeds each step's GRU state back into actor_critic.act(); without the surrounding torch.no_grad() every step's hidden state is graph-attached and chains to all previous steps (masks multiply it, they do not cut it)
# Shape: evaluate(actor_critic, obs_rms, ...) builds eval envs, zero-inits eval_recurrent_hidden_states on the device and loops until 10 episode rewards were seen, rebinding the hidden state from act(obs, hidden, masks) each step with grad on
# Expect: TML005 line 51; TML003 line 51
import numpy as np
import torch
import torch.nn as nn

from a2c_ppo_acktr import utils
from a2c_ppo_acktr.envs import make_vec_envs


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, hidden_size, dist):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden_size), nn.Tanh())
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.critic_linear = nn.Linear(hidden_size, 1)
        self.dist = dist
        self.recurrent_hidden_state_size = hidden_size

    def _forward_gru(self, x, hxs, masks):
        x, hxs = self.gru(x.unsqueeze(0), (hxs * masks).unsqueeze(0))
        return x.squeeze(0), hxs.squeeze(0)

    def act(self, inputs, rnn_hxs, masks, deterministic=False):
        features, rnn_hxs = self._forward_gru(self.encoder(inputs), rnn_hxs, masks)
        value = self.critic_linear(features)
        dist = self.dist(features)
        action = dist.mode() if deterministic else dist.sample()
        action_log_probs = dist.log_probs(action)
        return value, action, action_log_probs, rnn_hxs


def evaluate(actor_critic, obs_rms, env_name, seed, num_processes, eval_log_dir, device):
    eval_envs = make_vec_envs(env_name, seed + num_processes, num_processes,
                              None, eval_log_dir, device, True)
    vec_norm = utils.get_vec_normalize(eval_envs)
    if vec_norm is not None:
        vec_norm.eval()
        vec_norm.obs_rms = obs_rms

    eval_episode_rewards = []
    obs = eval_envs.reset()
    eval_recurrent_hidden_states = torch.zeros(
        num_processes, actor_critic.recurrent_hidden_state_size, device=device)
    eval_masks = torch.zeros(num_processes, 1, device=device)

    while len(eval_episode_rewards) < 10:
        # the policy runs with autograd on: the GRU state keeps its history
        _, action, _, eval_recurrent_hidden_states = actor_critic.act(obs, eval_recurrent_hidden_states, eval_masks, deterministic=True)  # expect: TML005, TML003

        obs, _, done, infos = eval_envs.step(action)
        eval_masks = torch.tensor([[0.0] if done_ else [1.0] for done_ in done],
                                  dtype=torch.float32, device=device)
        for info in infos:
            if 'episode' in info.keys():
                eval_episode_rewards.append(info['episode']['r'])

    eval_envs.close()
    print(" Evaluation using {} episodes: mean reward {:.5f}\n".format(
        len(eval_episode_rewards), np.mean(eval_episode_rewards)))
    return float(np.mean(eval_episode_rewards))
