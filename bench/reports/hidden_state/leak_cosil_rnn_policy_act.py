# Source: https://github.com/hai-h-nguyen/cosil-corl22/blob/3f632f2ce800389a0dbd923f874cbc4bcbc2a334/policies/models/policy_rnn.py
# Report: audited correct idiom: the recurrent BC/SAC agent (ModelFreeOffPolicy_Separate_RNN) decorates act() and get_initial_info() with @torch.no_grad(), so the internal RNN state carried from env step to env step during rollouts holds no graph
# Shape: the rewrite drops the decorator: act() runs the Actor_RNN with grad enabled and the rollout loop feeds the returned internal_state back in every step, so each step's graph links to the previous one for the whole episode
# Expect: TML005 line 47
import torch
import torch.nn as nn


class ModelFreeOffPolicy_Separate_RNN(nn.Module):
    def __init__(self, actor, critic, exploration_noise=0.0):
        super().__init__()
        self.actor = actor
        self.critic = critic
        self.exploration_noise = exploration_noise

    def get_initial_info(self):
        return self.actor.get_initial_info()

    def act(self, prev_internal_state, prev_action, obs, deterministic=False):
        prev_action = prev_action.unsqueeze(0)  # (1, B, dim)
        obs = obs.unsqueeze(0)  # (1, B, dim)
        current_action_tuple, current_internal_state = self.actor.act(
            prev_internal_state=prev_internal_state,
            prev_action=prev_action,
            obs=obs,
            deterministic=deterministic,
            exploration_noise=self.exploration_noise,
        )
        return current_action_tuple, current_internal_state


class Learner:
    def __init__(self, agent, train_env, policy_storage, device):
        self.agent = agent
        self.train_env = train_env
        self.policy_storage = policy_storage
        self.device = device

    def collect_rollouts(self, num_rollouts, deterministic=False):
        total_steps = 0
        for _ in range(num_rollouts):
            obs = torch.as_tensor(self.train_env.reset(), device=self.device).float().reshape(1, -1)
            action, reward, internal_state = self.agent.get_initial_info()
            done, steps = False, 0
            obs_list, act_list, rew_list, next_obs_list, term_list = [], [], [], [], []
            while not done:
                (action, _, _, _), internal_state = self.agent.act(internal_state, action, obs, deterministic)  # expect: TML005
                next_obs, reward, done, info = self.train_env.step(action.squeeze(0).detach().cpu().numpy())
                next_obs = torch.as_tensor(next_obs, device=self.device).float().reshape(1, -1)
                obs_list.append(obs.cpu().numpy())
                act_list.append(action.detach().cpu().numpy())
                rew_list.append(float(reward))
                next_obs_list.append(next_obs.cpu().numpy())
                term_list.append(float(done and not info.get("TimeLimit.truncated", False)))
                obs = next_obs
                steps += 1
            self.policy_storage.add_episode(observations=obs_list, actions=act_list,
                                            rewards=rew_list, terminals=term_list,
                                            next_observations=next_obs_list)
            total_steps += steps
        return total_steps
