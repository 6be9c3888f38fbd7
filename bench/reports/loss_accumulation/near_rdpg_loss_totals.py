# Source: https://github.com/fshamshirdar/pytorch-rdpg/blob/master/rdpg.py
# Report: recurrent DDPG update_policy() (fixed here) steps critic and actor once per timestep and keeps only float running totals of the losses for reporting
# Shape: each timestep's loss is backpropagated inside the loop; the totals are summed with .item(), so they are plain floats; hx/cx are re-initialised at the top of every iteration, so no recurrent state is carried
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch.optim import Adam

HIDDEN = 50


def to_tensor(x, device="cuda"):
    return torch.as_tensor(np.asarray(x), dtype=torch.float32, device=device)


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(t.data * (1.0 - tau) + s.data * tau)


class RDPG:
    def __init__(self, agent, memory, args):
        self.agent = agent
        self.memory = memory
        self.batch_size = args.bsize
        self.discount = args.discount
        self.tau = args.tau
        self.critic_optim = Adam(self.agent.critic.parameters(), lr=args.rate)
        self.actor_optim = Adam(self.agent.actor.parameters(), lr=args.prate)

    def update_policy(self):
        experiences = self.memory.sample(self.batch_size)
        if len(experiences) == 0:
            return

        policy_loss_total = 0
        value_loss_total = 0
        for t in range(len(experiences) - 1):
            target_hx = torch.zeros(self.batch_size, HIDDEN, device="cuda")
            target_cx = torch.zeros(self.batch_size, HIDDEN, device="cuda")
            hx = torch.zeros(self.batch_size, HIDDEN, device="cuda")
            cx = torch.zeros(self.batch_size, HIDDEN, device="cuda")

            state0 = np.stack([tr.state0 for tr in experiences[t]])
            action = np.stack([tr.action for tr in experiences[t]])
            reward = np.expand_dims(np.stack([tr.reward for tr in experiences[t]]), axis=1)
            state1 = np.stack([tr.state0 for tr in experiences[t + 1]])

            with torch.no_grad():
                target_action, (target_hx, target_cx) = self.agent.actor_target(
                    to_tensor(state1), (target_hx, target_cx))
                next_q_value = self.agent.critic_target([to_tensor(state1), target_action])
            target_q = to_tensor(reward) + self.discount * next_q_value

            current_q = self.agent.critic([to_tensor(state0), to_tensor(action)])
            value_loss = F.smooth_l1_loss(current_q, target_q)
            value_loss /= len(experiences)
            value_loss_total += value_loss.item()

            action, (hx, cx) = self.agent.actor(to_tensor(state0), (hx, cx))
            policy_loss = -self.agent.critic([to_tensor(state0), action])
            policy_loss /= len(experiences)

            self.agent.critic.zero_grad()
            value_loss.backward()
            self.critic_optim.step()

            self.agent.actor.zero_grad()
            policy_loss_total += policy_loss.mean().item()
            policy_loss = policy_loss.mean()
            policy_loss.backward()
            self.actor_optim.step()

        soft_update(self.agent.actor_target, self.agent.actor, self.tau)
        soft_update(self.agent.critic_target, self.agent.critic, self.tau)
        return value_loss_total, policy_loss_total
