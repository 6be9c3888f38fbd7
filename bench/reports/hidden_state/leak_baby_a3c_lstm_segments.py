# Source: https://github.com/greydanus/baby-a3c/blob/c4b7b4a3a2f445e666fb27f1ffa323def8d0f91a/baby-a3c.py
# Report: audited A3C worker: the LSTMCell state (hx, cx) is carried across 20-step rollout segments and cut at the top of every segment (`Variable(hx.data)`, i.e. detach) unless the episode ended
# Shape: the segment start keeps hx/cx as they are when the episode goes on, so each segment's graph hangs off the previous one (backward reaches into freed buffers / the chain grows)
# Expect: TML005 line 59
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.signal import lfilter

discount = lambda x, gamma: lfilter([1], [1, -gamma], x[::-1])[::-1]


class NNPolicy(nn.Module):  # an actor-critic neural network
    def __init__(self, channels, memsize, num_actions):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.conv4 = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.lstm = nn.LSTMCell(32 * 5 * 5, memsize)
        self.critic_linear, self.actor_linear = nn.Linear(memsize, 1), nn.Linear(memsize, num_actions)

    def forward(self, inputs):
        inputs, (hx, cx) = inputs
        x = F.elu(self.conv1(inputs))
        x = F.elu(self.conv2(x))
        x = F.elu(self.conv3(x))
        x = F.elu(self.conv4(x))
        hx, cx = self.lstm(x.view(-1, 32 * 5 * 5), (hx, cx))
        return self.critic_linear(hx), self.actor_linear(hx), (hx, cx)


def cost_func(args, values, logps, actions, rewards):
    np_values = values.view(-1).detach().numpy()
    delta_t = np.asarray(rewards) + args.gamma * np_values[1:] - np_values[:-1]
    logpys = logps.gather(1, actions.view(-1, 1))
    gae = discount(delta_t, args.gamma * args.tau)
    policy_loss = -(logpys.view(-1) * torch.tensor(gae.copy(), dtype=torch.float32)).sum()
    rewards[-1] += args.gamma * np_values[-1]
    discounted_r = torch.tensor(discount(np.asarray(rewards), args.gamma).copy(), dtype=torch.float32)
    value_loss = .5 * (discounted_r - values[:-1, 0]).pow(2).sum()
    entropy_loss = (-logps * torch.exp(logps)).sum()
    return policy_loss + 0.5 * value_loss - 0.01 * entropy_loss


def train(shared_model, shared_optimizer, rank, args, info, env, prepro):
    model = NNPolicy(channels=1, memsize=args.hidden, num_actions=args.num_actions)
    state = torch.tensor(prepro(env.reset()))
    episode_length, epr, eploss, done = 0, 0, 0, True

    while info['frames'][0] <= 8e7:
        model.load_state_dict(shared_model.state_dict())  # sync with shared model
        cx = torch.zeros(1, 256) if done else cx  # lstm memory vector
        hx = torch.zeros(1, 256) if done else hx  # lstm activation vector
        values, logps, actions, rewards = [], [], [], []
        for step in range(args.rnn_steps):
            episode_length += 1
            value, logit, (hx, cx) = model((state.view(1, 1, 80, 80), (hx, cx)))  # expect: TML005
            logp = F.log_softmax(logit, dim=-1)
            action = torch.exp(logp).multinomial(num_samples=1).data[0]
            state, reward, done, _ = env.step(action.numpy()[0])
            state = torch.tensor(prepro(state))
            epr += reward
            reward = np.clip(reward, -1, 1)
            done = done or episode_length >= 1e4
            info['frames'].add_(1)
            if done:
                info['episodes'] += 1
                info['run_epr'].mul_(1 - args.horizon).add_(args.horizon * epr)
                info['run_loss'].mul_(1 - args.horizon).add_(args.horizon * eploss)
                episode_length, epr, eploss = 0, 0, 0
                state = torch.tensor(prepro(env.reset()))
            values.append(value)
            logps.append(logp)
            actions.append(action)
            rewards.append(reward)

        next_value = torch.zeros(1, 1) if done else model((state.unsqueeze(0), (hx, cx)))[0]
        values.append(next_value.detach())

        loss = cost_func(args, torch.cat(values), torch.cat(logps), torch.cat(actions), np.asarray(rewards))
        eploss += loss.item()
        shared_optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 40)
        for param, shared_param in zip(model.parameters(), shared_model.parameters()):
            if shared_param.grad is None:
                shared_param._grad = param.grad  # sync gradients with shared model
        shared_optimizer.step()
