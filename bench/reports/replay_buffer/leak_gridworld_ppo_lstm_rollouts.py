# Source: https://github.com/FelixBaastadBerg/RL-project/blob/3baaea53cf57d53aa3cda11cf5ba8769520faff5/Code/PPO_RNN_Experiment_1.py
# Report: audited correct idiom: the PPO-LSTM agent samples its rollout under torch.no_grad(), appends .cpu() copies of log_prob and value to per-rollout lists, and carries self.hx = hx.detach() (PPOAgent.collect_rollouts / train)
# Shape: collect_rollouts + train of the same agent; the leak is the original with its torch.no_grad() safeguard removed: the .cpu() copies still pin each step's GPU graph for the whole rollout (detached only after torch.stack in train)
# Expect: TML001 line 45; TML001 line 46
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class PPOAgent:
    def __init__(self, envs, policy, input_size, num_envs=100, num_steps=128, num_updates=2000, hidden_size=128):
        self.envs = envs
        self.num_envs = num_envs
        self.num_steps = num_steps
        self.num_updates = num_updates
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.gamma = 0.99
        self.gae_lambda = 0.95
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.policy = policy.to(self.device)
        self.optimizer = optim.Adam(self.policy.parameters(), lr=2.5e-4, eps=1e-5)
        self.all_rewards = []
        self.hx = torch.zeros(1, self.num_envs, self.hidden_size, device=self.device)
        self.cx = torch.zeros(1, self.num_envs, self.hidden_size, device=self.device)

    def collect_rollouts(self):
        obs_list, actions_list, log_probs_list = [], [], []
        values_list, rewards_list, dones_list = [], [], []
        hxs_list, cxs_list = [], []

        obs = np.array([env.reset() for env in self.envs])
        obs = torch.tensor(obs, device=self.device)

        for step in range(self.num_steps):
            policy_logits, value, (hx, cx) = self.policy(obs, self.hx, self.cx)
            dist = torch.distributions.Categorical(logits=policy_logits)
            action = dist.sample()
            log_prob = dist.log_prob(action)

            # Store the collected data
            obs_list.append(obs.cpu())
            actions_list.append(action.cpu())
            log_probs_list.append(log_prob.cpu())  # expect: TML001
            values_list.append(value.cpu())  # expect: TML001
            hxs_list.append(self.hx.squeeze(0).cpu())
            cxs_list.append(self.cx.squeeze(0).cpu())
            self.hx = hx.detach()
            self.cx = cx.detach()

            obs_np, rewards, dones = [], [], []
            for i, env in enumerate(self.envs):
                ob, reward, done = env.step(action[i].item())
                if done:
                    ob = env.reset()
                    self.hx[:, i, :] = torch.zeros_like(self.hx[:, i, :])
                    self.cx[:, i, :] = torch.zeros_like(self.cx[:, i, :])
                obs_np.append(ob)
                rewards.append(reward)
                dones.append(done)
            obs = torch.tensor(np.array(obs_np), device=self.device)
            rewards_list.append(torch.tensor(rewards, dtype=torch.float32))
            dones_list.append(torch.tensor(dones, dtype=torch.float32))

        with torch.no_grad():
            _, next_value, _ = self.policy(obs, self.hx, self.cx)
        next_value = next_value.cpu()
        return (obs_list, actions_list, log_probs_list, values_list,
                rewards_list, dones_list, next_value, hxs_list, cxs_list)

    def train(self):
        for update in range(self.num_updates):
            (obs_list, actions_list, log_probs_list, values_list,
             rewards_list, dones_list, next_value, hxs_list, cxs_list) = self.collect_rollouts()
            advantages, returns = self.compute_gae(rewards_list, values_list, dones_list, next_value)

            obs_batch = torch.stack(obs_list).view(-1, self.input_size)
            actions_batch = torch.stack(actions_list).view(-1)
            log_probs_old_batch = torch.stack(log_probs_list).view(-1).detach()
            old_values_batch = torch.stack(values_list).view(-1).detach()
            hxs_batch = torch.stack(hxs_list).view(-1, self.hidden_size)
            cxs_batch = torch.stack(cxs_list).view(-1, self.hidden_size)

            loss = self.update_policy(obs_batch, actions_batch, log_probs_old_batch,
                                      returns.view(-1).detach(), advantages.view(-1).detach(),
                                      hxs_batch, cxs_batch, old_values_batch)
            avg_reward = torch.stack(rewards_list).sum(0).mean().item()
            self.all_rewards.append(avg_reward)
            if update % 10 == 0:
                print(f"Update {update}, Loss: {loss:.4f}, Avg Reward: {avg_reward:.2f}")

    def compute_gae(self, rewards_list, values_list, dones_list, next_value):
        raise NotImplementedError

    def update_policy(self, *batches):
        raise NotImplementedError
