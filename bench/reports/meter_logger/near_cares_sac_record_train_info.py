# Source: https://github.com/UoA-CARES/cares_reinforcement_learning/blob/952fa13fdb5a9f887c4cf20f9ddab3dad813a745/cares_reinforcement_learning/algorithm/policy/SACAE.py
# Report: SAC(-AE) agent as in the repository: _update_critic returns (info, priorities) with every loss reduced by .item(); the runner merges the info into the episode row that Record.log_train keeps.
# Shape: all values in the info dict are Python floats (.item()) and the PER priorities go through .data.numpy(), so the rows Record keeps for the whole run hold no tensors.
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Record:
    def __init__(self):
        self.train_rows = []

    def log_train(self, display=False, **logs):
        self.train_rows.append(logs)
        if display:
            print(" | ".join(f"{k}: {str(v)[:10]}" for k, v in logs.items()))


class SACAgent:
    def __init__(self, actor, critic, target_critic, gamma=0.99, min_priority=1.0, per_alpha=0.6):
        self.device = torch.device("cuda")
        self.actor_net = actor.to(self.device)
        self.critic_net = critic.to(self.device)
        self.target_critic_net = target_critic.to(self.device)
        self.gamma = gamma
        self.min_priority = min_priority
        self.per_alpha = per_alpha
        self.log_alpha = torch.zeros(1, device=self.device, requires_grad=True)
        self.critic_opt = torch.optim.Adam(self.critic_net.parameters(), lr=1e-3)
        self.learn_counter = 0

    def _update_critic(self, states, actions, rewards, next_states, dones, weights):
        with torch.no_grad():
            next_actions, next_log_pi = self.actor_net(next_states)
            tq1, tq2 = self.target_critic_net(next_states, next_actions)
            target_q = torch.minimum(tq1, tq2) - self.log_alpha.exp() * next_log_pi
            q_target = rewards + self.gamma * (1 - dones) * target_q

        q1, q2 = self.critic_net(states, actions)
        td_error_one = (q1.detach() - q_target).abs()
        td_error_two = (q2.detach() - q_target).abs()

        loss_one = (F.mse_loss(q1, q_target, reduction="none") * weights).mean()
        loss_two = (F.mse_loss(q2, q_target, reduction="none") * weights).mean()
        critic_loss_total = loss_one + loss_two

        self.critic_opt.zero_grad()
        critic_loss_total.backward()
        self.critic_opt.step()

        priorities = (
            torch.max(td_error_one, td_error_two)
            .clamp(self.min_priority)
            .pow(self.per_alpha)
            .cpu()
            .data.numpy()
            .flatten()
        )
        info = {
            "critic_loss_one": loss_one.item(),
            "critic_loss_two": loss_two.item(),
            "critic_loss_total": critic_loss_total.item(),
        }
        return info, priorities

    def train_policy(self, memory, batch_size):
        self.learn_counter += 1
        batch, indices = memory.sample(batch_size)
        states, actions, rewards, next_states, dones, weights = (
            torch.as_tensor(x, dtype=torch.float32, device=self.device) for x in batch
        )
        info = {}
        critic_info, priorities = self._update_critic(states, actions, rewards, next_states, dones, weights)
        info |= critic_info
        memory.update_priorities(indices, priorities)
        return info

    def select_action(self, state):
        with torch.no_grad():
            s = torch.as_tensor(state, dtype=torch.float32, device=self.device).unsqueeze(0)
            action, _ = self.actor_net(s)
        return action.cpu().numpy().flatten()


class TrainingRunner:
    def __init__(self, env, agent, memory, record, max_steps=100_000, exploration=1000, batch_size=256):
        self.env = env
        self.agent = agent
        self.memory = memory
        self.record = record
        self.max_steps = max_steps
        self.exploration = exploration
        self.batch_size = batch_size

    def run_training(self):
        state = self.env.reset()
        episode_num, episode_reward, train_info = 0, 0.0, {}
        for step in range(self.max_steps):
            if step < self.exploration:
                action = self.env.sample_action()
            else:
                action = self.agent.select_action(state)
            next_state, reward, done = self.env.step(action)
            self.memory.add(state, action, reward, next_state, done)
            state = next_state
            episode_reward += reward
            if step >= self.exploration:
                train_info = self.agent.train_policy(self.memory, self.batch_size)
            if done:
                info = {"episode_reward": episode_reward}
                info |= train_info
                train_info = {}
                self.record.log_train(total_steps=step + 1, episode=episode_num + 1, display=True, **info)
                episode_num += 1
                episode_reward = 0.0
                state = self.env.reset()
