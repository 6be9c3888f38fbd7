# Source: https://github.com/openai/spinningup/blob/master/spinup/algos/pytorch/sac/sac.py
# Report: Spinning Up SAC: compute_loss_q / compute_loss_pi return a logging dict next to the loss, and update() hands it to EpochLogger.store, which appends every value to epoch_dict until log_tabular at the end of the epoch
# Shape: the helper packs q1/q2/logp_pi as .detach().cpu().numpy() and the losses are stored with .item(), so the logger's lists only hold host numbers (this variant runs on the GPU)
# Expect: near-miss: must be silent
from collections import defaultdict
from copy import deepcopy
import itertools

import numpy as np
import torch
from torch.optim import Adam


class EpochLogger:
    def __init__(self):
        self.epoch_dict = defaultdict(list)

    def store(self, **kwargs):
        for k, v in kwargs.items():
            self.epoch_dict[k].append(v)

    def log_tabular(self, key):
        vals = [v.float().mean().item() if torch.is_tensor(v) else np.mean(v) for v in self.epoch_dict[key]]
        print(key, np.mean(vals))
        self.epoch_dict[key] = []


def sac(ac, replay_buffer, total_steps, steps_per_epoch, update_every=50, batch_size=100,
        gamma=0.99, alpha=0.2, polyak=0.995, lr=1e-3, device="cuda"):
    logger = EpochLogger()
    ac = ac.to(device)
    ac_targ = deepcopy(ac)
    for p in ac_targ.parameters():
        p.requires_grad = False
    q_params = list(itertools.chain(ac.q1.parameters(), ac.q2.parameters()))
    pi_optimizer = Adam(ac.pi.parameters(), lr=lr)
    q_optimizer = Adam(q_params, lr=lr)

    def compute_loss_q(data):
        o, a, r, o2, d = data["obs"], data["act"], data["rew"], data["obs2"], data["done"]
        q1, q2 = ac.q1(o, a), ac.q2(o, a)
        with torch.no_grad():
            a2, logp_a2 = ac.pi(o2)
            q_targ = torch.min(ac_targ.q1(o2, a2), ac_targ.q2(o2, a2))
            backup = r + gamma * (1 - d) * (q_targ - alpha * logp_a2)
        loss_q = ((q1 - backup) ** 2).mean() + ((q2 - backup) ** 2).mean()
        q_info = dict(Q1Vals=q1.detach().cpu().numpy(), Q2Vals=q2.detach().cpu().numpy())
        return loss_q, q_info

    def compute_loss_pi(data):
        o = data["obs"]
        pi, logp_pi = ac.pi(o)
        q_pi = torch.min(ac.q1(o, pi), ac.q2(o, pi))
        loss_pi = (alpha * logp_pi - q_pi).mean()
        pi_info = dict(LogPi=logp_pi.detach().cpu().numpy())
        return loss_pi, pi_info

    def update(data):
        q_optimizer.zero_grad()
        loss_q, q_info = compute_loss_q(data)
        loss_q.backward()
        q_optimizer.step()
        logger.store(LossQ=loss_q.item(), **q_info)

        for p in q_params:
            p.requires_grad = False
        pi_optimizer.zero_grad()
        loss_pi, pi_info = compute_loss_pi(data)
        loss_pi.backward()
        pi_optimizer.step()
        for p in q_params:
            p.requires_grad = True
        logger.store(LossPi=loss_pi.item(), **pi_info)

        with torch.no_grad():
            for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
                p_targ.data.mul_(polyak)
                p_targ.data.add_((1 - polyak) * p.data)

    for t in range(total_steps):
        if t % update_every == 0:
            for _ in range(update_every):
                batch = replay_buffer.sample_batch(batch_size, device)
                update(data=batch)
        if (t + 1) % steps_per_epoch == 0:
            for key in ("Q1Vals", "Q2Vals", "LogPi", "LossPi", "LossQ"):
                logger.log_tabular(key)
