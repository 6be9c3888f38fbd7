# Source: https://github.com/wassname/world-models-sonic-pytorch/blob/01f860c2ccf232fc2f604e1cd66fc028c855c643/world_models_sonic/helpers/deep_rl/ppo_agent.py
# Report: audit of a PPO agent with a world-model curiosity bonus: the intrinsic reward is the drop in world-model loss (initial_loss - loss, both graph-attached) and is fed per sample into a running normaliser; as in the repo, the bonus is taken with .item() before it reaches the running statistics, so the running mean/var stay plain numbers and nothing links successive rollouts' graphs
# Shape: PPOCuriosityAgent method curiosity_rewards() loops over the mini-batch and updates self.bonus_mean / self.bonus_var (Python floats) from gain[k].item(), then writes the normalised bonus into the rollout's reward tensor
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class PPOCuriosityAgent:
    def __init__(self, network, world_model, wm_optimizer, curiosity_weight=0.1, decay=0.99, boredom=0.0):
        self.network = network
        self.world_model = world_model
        self.wm_optimizer = wm_optimizer
        self.curiosity_weight = curiosity_weight
        self.decay = decay
        self.boredom = boredom
        self.bonus_mean = 0.0
        self.bonus_var = 1.0

    def world_model_loss(self, states, actions, next_states, train=True):
        pred = self.world_model(states, actions)
        loss = (pred - next_states).pow(2).flatten(1).mean(1)
        if train:
            self.wm_optimizer.zero_grad()
            loss.mean().backward()
            self.wm_optimizer.step()
        return loss

    def curiosity_rewards(self, states, actions, next_states, batch_size=256):
        n = states.size(0)
        bonus = torch.zeros(n, device=states.device)
        for start in range(0, n, batch_size):
            idx = torch.arange(start, min(start + batch_size, n), device=states.device)
            s, a, s_next = states[idx], actions[idx], next_states[idx]
            initial_loss = self.world_model_loss(s, a, s_next, train=True)
            loss = self.world_model_loss(s, a, s_next, train=False)
            gain = initial_loss - loss
            for k in range(gain.size(0)):
                g = gain[k].item()
                delta = g - self.bonus_mean
                self.bonus_mean = self.bonus_mean + (1 - self.decay) * delta
                self.bonus_var = self.decay * self.bonus_var + (1 - self.decay) * delta ** 2
                normed = (g - self.bonus_mean) / (self.bonus_var ** 0.5 + 1e-8)
                bonus[idx[k]] = (float(normed) - self.boredom) * self.curiosity_weight
        return bonus

    def ppo_update(self, rollout, opt, clip=0.2, epochs=4):
        states, actions, next_states, old_log_probs, returns, advantages = rollout
        bonus = self.curiosity_rewards(states, actions, next_states)
        advantages = advantages + bonus.unsqueeze(1)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        for _ in range(epochs):
            log_probs, entropy, values = self.network.evaluate(states, actions)
            ratio = (log_probs - old_log_probs).exp()
            surr = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
            loss = -surr.mean() + 0.5 * (returns - values).pow(2).mean() - 0.01 * entropy.mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.network.parameters(), 0.5)
            opt.step()
        return float(bonus.mean())
