# Source: https://github.com/hu-po/pySACQ/issues/2
# Report: "act() with gradient recording": act() runs the actor forward with autograd on; here Actor.predict keeps the original safeguard, .cpu().data.numpy() on the log_prob
# Shape: the log_prob reaches the Step namedtuple as a NumPy array, so the trajectory list and the replay buffer B keep no graph
# Expect: near-miss: must be silent

from collections import namedtuple

import numpy as np
import torch

# Named tuple for a single step within a trajectory
Step = namedtuple('Step', ['state', 'action', 'reward', 'task_id', 'log_prob'])

# Global step counters
ACT_STEP = 0


class BaseNet(torch.nn.Module):

    def __init__(self, state_dim, base_hidden_size, head_input_size, non_linear, use_gpu=True):
        super(BaseNet, self).__init__()
        self.non_linear = non_linear
        self.use_gpu = use_gpu
        self.layer1 = torch.nn.Linear(state_dim, base_hidden_size)
        self.layer2 = torch.nn.Linear(base_hidden_size, head_input_size)

    def forward_base(self, x):
        x = torch.Tensor(x)
        if self.use_gpu:
            x = x.cuda()
        x = self.non_linear(self.layer1(x))
        x = self.non_linear(self.layer2(x))
        return x


class Actor(BaseNet):
    """Class for policy (or actor) network"""

    def __init__(self, num_intentions=6, state_dim=8, base_hidden_size=32, head_input_size=16,
                 head_output_size=4, non_linear=torch.nn.ELU(), use_gpu=True):
        super(Actor, self).__init__(state_dim, base_hidden_size, head_input_size, non_linear, use_gpu)
        self.intention_nets = torch.nn.ModuleList(
            [torch.nn.Linear(head_input_size, head_output_size) for _ in range(num_intentions)])

    def forward(self, x, intention, log_prob=False):
        x = super().forward_base(x)
        probs = torch.nn.functional.softmax(self.intention_nets[intention](x), dim=-1)
        dist = torch.distributions.Categorical(probs)
        action = dist.sample()
        if log_prob:
            log_prob = dist.log_prob(action)
            return action, log_prob
        return action

    def predict(self, x, intention, to_numpy=True, log_prob=False):
        if log_prob:
            action, log_prob = self.forward(x, intention, log_prob=True)
            action = action.cpu().data
            log_prob = log_prob.cpu().data
            if to_numpy:
                action = action.numpy()
                log_prob = log_prob.numpy()
            return action, log_prob
        action = self.forward(x, intention).cpu().data
        if to_numpy:
            action = action.numpy()
        return action


def act(actor, env, task, B, num_trajectories=10, task_period=30, writer=None):
    """
    Performs actions in the environment collecting reward/experience (Algorithm 3).
    :param B: (list) replay buffer containing trajectories
    """
    global ACT_STEP
    for trajectory_idx in range(num_trajectories):
        print('Acting: trajectory %s of %s' % (trajectory_idx + 1, num_trajectories))
        trajectory = []  # collection of state, action, task pairs
        task.reset()
        obs = env.reset()
        done = False
        num_steps = 0
        while not done:
            if num_steps % task_period == 0:
                task.sample()
            # Get the action from current actor policy
            action, log_prob = actor.predict(obs, task.current_task, log_prob=True)
            new_obs, gym_reward, done, _ = env.step(np.asscalar(action))
            reward = task.reward(new_obs) + [gym_reward]
            if writer:
                for i in range(task.num_tasks):
                    writer.add_scalar('reward_t%s' % i, reward[i], ACT_STEP)
            # group information into a step and add to current trajectory
            new_step = Step(obs, action, reward, task.current_task, log_prob)
            trajectory.append(new_step)
            obs = new_obs
            num_steps += 1
            ACT_STEP += 1
        # Add trajectory to replay buffer
        B.append(trajectory)
