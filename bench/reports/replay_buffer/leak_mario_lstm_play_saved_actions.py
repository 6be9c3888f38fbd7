# Source: https://github.com/zhangtravis/super-mario-bros/blob/1667361ba2e0aaf24eab38c916836f9bf5752a4b/agents/a2c_lstm_agent.py
# Report: audit of an A2C+LSTM Super Mario agent: play() reuses the training get_action path, so every frame's log-prob and value (CUDA tensors, made under no_grad) go into self.saved_actions, which only backprop() empties and play() never calls; the endless watch loop grows GPU memory
# Shape: the agent's remember() appends (log_prob, value) to self.saved_actions; play() runs forever under no_grad, passes the device tensors from the policy to remember() every frame and never clears the list
# Expect: TML004 line 65
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class MarioPolicy(nn.Module):
    def __init__(self, n_actions, hidden=512):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 32, 4, stride=3), nn.ReLU(inplace=True),
            nn.Conv2d(32, 64, 4, stride=3), nn.ReLU(inplace=True),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.lstm = nn.LSTMCell(64 * 16, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, frame, hx, cx):
        hx, cx = self.lstm(self.conv(frame), (hx, cx))
        return self.pi(hx), self.v(hx), hx, cx


class LSTMAgent:
    def __init__(self, n_actions, env, device="cuda", hidden=512):
        self.env = env
        self.device = torch.device(device)
        self.hidden = hidden
        self.model = MarioPolicy(n_actions, hidden).to(self.device)
        self.saved_actions = []
        self.rewards = []

    def load(self, path):
        self.model.load_state_dict(torch.load(path, map_location=self.device))

    def to_tensor(self, frame):
        x = torch.from_numpy(frame.copy()).float().div_(255.0)
        return x.permute(2, 0, 1).unsqueeze(0).to(self.device)

    def get_action(self, state, hx, cx):
        logits, value, hx, cx = self.model(state, hx, cx)
        dist = Categorical(F.softmax(logits, dim=-1))
        action = dist.sample()
        return action, dist.log_prob(action), value[0], hx, cx

    def remember(self, log_prob, value):
        self.saved_actions.append((log_prob, value))

    def play(self, render=True):
        self.model.eval()
        running_reward, ep, done = 1.0, 0, True
        while True:
            if done:
                state = self.env.reset()
                hx = torch.zeros(1, self.hidden, device=self.device)
                cx = torch.zeros(1, self.hidden, device=self.device)
            ep_reward = 0.0
            with torch.no_grad():
                for _ in range(10000):
                    action, log_prob, value, hx, cx = self.get_action(self.to_tensor(state), hx, cx)
                    self.remember(log_prob, value)  # expect: TML004
                    state, reward, done, _ = self.env.step(action.item())
                    self.rewards.append(reward)
                    ep_reward += reward
                    if render:
                        self.env.render()
                    if done:
                        break
            running_reward = 0.05 * ep_reward + 0.95 * running_reward
            ep += 1
            print(f"episode {ep}\treward {ep_reward:.1f}\trunning {running_reward:.1f}")
