# Source: https://github.com/Kaixhin/imitation-learning/blob/00800cb1420a1cf552e7e001b1f469e7226ed40a/training.py
# Report: audited bug: the GAIL/AIRL discriminator update took an R1 penalty from autograd.backward(expert_loss, create_graph=True) and parameter .grad norms; the create_graph grads live in p.grad (param<->grad cycle), replaced in commit 0b0333c by autograd.grad on inputs
# Shape: same adversarial_imitation_update loop over expert/policy dataloaders, create_graph backward into .grad, .grad norms summed into the penalty, no p.grad = None afterwards
# Expect: TML013 line 44
import torch
from torch import autograd
from torch.nn import functional as F
from torch.utils.data import DataLoader


def indicate_absorbing(states, actions, terminals):
    absorbing = terminals.to(dtype=torch.bool)
    abs_states = torch.cat([states, torch.zeros(states.size(0), 1)], dim=1)
    abs_states[absorbing] = 0
    abs_states[absorbing, -1] = 1
    abs_actions = actions.clone()
    abs_actions[absorbing] = 0
    return abs_states, abs_actions


def adversarial_imitation_update(algorithm, agent, discriminator, expert_trajectories,
                                 policy_trajectories, discriminator_optimiser, batch_size,
                                 absorbing=False, r1_reg_coeff=1.0, pos_class_prior=1.0):
    expert_loader = DataLoader(expert_trajectories, batch_size=batch_size, shuffle=True,
                               drop_last=True, num_workers=4)
    policy_loader = DataLoader(policy_trajectories, batch_size=batch_size, shuffle=True,
                               drop_last=True, num_workers=4)

    for expert_transition, policy_transition in zip(expert_loader, policy_loader):
        expert_state, expert_action = expert_transition["states"], expert_transition["actions"]
        policy_state, policy_action = policy_transition["states"], policy_transition["actions"]
        if absorbing:
            expert_state, expert_action = indicate_absorbing(
                expert_state, expert_action, expert_transition["terminals"])
            policy_state, policy_action = indicate_absorbing(
                policy_state, policy_action, policy_transition["terminals"])

        D_expert = discriminator(expert_state, expert_action)
        D_policy = discriminator(policy_state, policy_action)

        discriminator_optimiser.zero_grad(set_to_none=True)
        prior = pos_class_prior if algorithm == "PUGAIL" else 1.0
        expert_loss = prior * F.binary_cross_entropy(D_expert, torch.ones_like(D_expert))
        autograd.backward(expert_loss, create_graph=True)  # expect: TML013
        r1_reg = 0
        for param in discriminator.parameters():
            r1_reg = r1_reg + param.grad.norm()  # R1 penalty read back from .grad

        policy_loss = F.binary_cross_entropy(D_policy, torch.zeros_like(D_policy))
        (policy_loss + r1_reg_coeff * r1_reg).backward()
        discriminator_optimiser.step()
        # the .grad tensors still carry their double-backward graph here


def train_discriminator(discriminator, agent, expert_trajectories, policy_trajectories,
                        discriminator_optimiser, cfg):
    for _ in range(cfg.discriminator_epochs):
        adversarial_imitation_update(cfg.algorithm, agent, discriminator, expert_trajectories,
                                     policy_trajectories, discriminator_optimiser,
                                     cfg.batch_size, absorbing=cfg.absorbing,
                                     r1_reg_coeff=cfg.r1_reg_coeff)
