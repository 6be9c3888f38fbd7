# Source: https://github.com/HaiyinPiao/pytorch-a2clstm-DRQN/blob/0941663f87395f96c0b48a39e99d6da5a32a3991/a2clstm_cartpole.py
# Report: fixed variant of a2clstm_cartpole.py: forward keeps only detached copies of the LSTM state, and the periodic test rollout runs under torch.no_grad() with a history reset per episode
# Shape: forward computes hx, cx from lstm(x, (self.hx, self.cx)) but stores hx.detach(), cx.detach() on self, so no graph links one call to the next; the test forward is grad-free
# Expect: near-miss: must be silent

import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import gym

# Hyper Parameters
STATE_DIM, ACTION_DIM = 4, 2
STEP, SAMPLE_NUMS = 2000, 30
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ActorNetwork(nn.Module):

    def __init__(self, input_size, hidden_size, action_size):
        super(ActorNetwork, self).__init__()
        self.hidden_size = hidden_size
        self.hx, self.cx = None, None
        self.lstm = nn.LSTMCell(input_size, hidden_size)
        self.fc = nn.Linear(hidden_size, action_size)

    def reset_history(self):
        self.hx = torch.zeros(1, self.hidden_size, device=device)
        self.cx = torch.zeros(1, self.hidden_size, device=device)

    def forward(self, x):
        hx, cx = self.lstm(x, (self.hx, self.cx))
        self.hx, self.cx = hx.detach(), cx.detach()
        x = F.relu(self.fc(hx))
        return F.log_softmax(x, dim=-1)


class ValueNetwork(nn.Module):

    def __init__(self, input_size, hidden_size, output_size):
        super(ValueNetwork, self).__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def roll_out(actor_network, task, sample_nums, value_network, init_state):
    states, actions, rewards = [], [], []
    is_done, final_r, state = False, 0, init_state
    actor_network.reset_history()
    for j in range(sample_nums):
        states.append(state)
        log_softmax_action = actor_network(torch.tensor([state], dtype=torch.float32, device=device))
        softmax_action = torch.exp(log_softmax_action)
        action = np.random.choice(ACTION_DIM, p=softmax_action.cpu().data.numpy()[0])
        one_hot_action = [int(k == action) for k in range(ACTION_DIM)]
        next_state, reward, done, _ = task.step(action)
        actions.append(one_hot_action)
        rewards.append(reward)
        final_state = state = next_state
        if done:
            is_done, state = True, task.reset()
            actor_network.reset_history()
            break
    if not is_done:
        final_r = value_network(torch.tensor([final_state], dtype=torch.float32, device=device)).cpu().data.numpy()
    return states, actions, rewards, final_r, state


def discount_reward(r, gamma, final_r):
    discounted_r, running_add = np.zeros_like(r), final_r
    for t in reversed(range(0, len(r))):
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def main():
    task = gym.make("CartPole-v0")
    init_state = task.reset()
    value_network = ValueNetwork(input_size=STATE_DIM, hidden_size=40, output_size=1).to(device)
    value_network_optim = torch.optim.Adam(value_network.parameters(), lr=0.01)
    actor_network = ActorNetwork(STATE_DIM, 40, ACTION_DIM).to(device)
    actor_network_optim = torch.optim.Adam(actor_network.parameters(), lr=0.01)

    for step in range(STEP):
        states, actions, rewards, final_r, current_state = roll_out(
            actor_network, task, SAMPLE_NUMS, value_network, init_state)
        init_state = current_state
        actions_var = torch.tensor(actions, dtype=torch.float32, device=device).view(-1, ACTION_DIM)
        states_var = torch.tensor(states, dtype=torch.float32, device=device).view(-1, STATE_DIM)

        actor_network_optim.zero_grad()
        log_softmax_actions = actor_network(states_var[0, :].unsqueeze(0))
        vs = value_network(states_var).detach()
        qs = torch.tensor(discount_reward(rewards, 0.99, final_r), dtype=torch.float32, device=device)
        advantages = qs - vs
        actor_network_loss = -torch.mean(torch.sum(log_softmax_actions * actions_var, 1) * advantages)
        actor_network_loss.backward()
        torch.nn.utils.clip_grad_norm_(actor_network.parameters(), 0.5)
        actor_network_optim.step()

        value_network_optim.zero_grad()
        value_network_loss = nn.MSELoss()(value_network(states_var).squeeze(1), qs)
        value_network_loss.backward()
        torch.nn.utils.clip_grad_norm_(value_network.parameters(), 0.5)
        value_network_optim.step()

        # Testing
        if (step + 1) % 50 == 0:
            result = 0
            test_task = gym.make("CartPole-v0")
            with torch.no_grad():
                for test_epi in range(10):
                    state = test_task.reset()
                    actor_network.reset_history()
                    for test_step in range(200):
                        softmax_action = torch.exp(actor_network(torch.tensor([state], dtype=torch.float32, device=device)))
                        action = np.argmax(softmax_action.cpu().data.numpy()[0])
                        state, reward, done, _ = test_task.step(action)
                        result += reward
                        if done:
                            break
            print("step:", step + 1, "test result:", result / 10.0)


if __name__ == '__main__':
    main()
