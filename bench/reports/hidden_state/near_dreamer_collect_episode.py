# Source: https://github.com/yusukeurakami/dreamer-pytorch/blob/b51af83694823eb07425a3f079324035bdecdb0e/main.py
# Report: after each model-fitting phase the agent collects a real episode, filtering its belief with the RSSM step by step, inside `with torch.no_grad()`
# Shape: belief/posterior_state/action are fed back into update_belief_and_act every env step; under no_grad none of them carries a graph, and the buffer gets action.cpu()
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn


class ExperienceReplay:
    def __init__(self, size, obs_dim, act_dim):
        self.observations = np.empty((size, obs_dim), dtype=np.float32)
        self.actions = np.empty((size, act_dim), dtype=np.float32)
        self.rewards = np.empty((size,), dtype=np.float32)
        self.nonterminals = np.empty((size, 1), dtype=np.float32)
        self.idx, self.size, self.full = 0, size, False

    def append(self, observation, action, reward, done):
        self.observations[self.idx] = observation.numpy()
        self.actions[self.idx] = action.numpy()
        self.rewards[self.idx] = reward
        self.nonterminals[self.idx] = not done
        self.idx = (self.idx + 1) % self.size
        self.full = self.full or self.idx == 0


def update_belief_and_act(args, env, actor, transition_model, encoder, belief, posterior_state, action, observation, explore=False):
    # one step of the recurrent state-space filter, then the policy on the new latent
    belief, _, _, _, posterior_state, _, _ = transition_model(
        posterior_state, action.unsqueeze(0), belief, encoder(observation).unsqueeze(0))
    belief, posterior_state = belief.squeeze(0), posterior_state.squeeze(0)
    action = actor(belief, posterior_state)
    if explore:
        action = action + args.action_noise * torch.randn_like(action)
    next_observation, reward, done = env.step(action[0].cpu())
    return belief, posterior_state, action, next_observation, reward, done


def collect_episode(args, env, D, actor, transition_model, encoder, metrics):
    with torch.no_grad():
        observation, total_reward = env.reset(), 0
        belief = torch.zeros(1, args.belief_size, device=args.device)
        posterior_state = torch.zeros(1, args.state_size, device=args.device)
        action = torch.zeros(1, env.action_size, device=args.device)
        for t in range(args.max_episode_length // args.action_repeat):
            belief, posterior_state, action, next_observation, reward, done = update_belief_and_act(
                args, env, actor, transition_model, encoder, belief, posterior_state, action,
                observation.to(device=args.device), explore=True)
            D.append(observation, action.cpu(), reward, done)
            total_reward += reward
            observation = next_observation
            if done:
                break
    metrics['train_rewards'].append(total_reward)
    return total_reward
