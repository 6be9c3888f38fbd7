# Source: https://github.com/Kaixhin/imitation-learning/commit/0b0333cae9ee9372644a34b89b9e443d1896ca4c
# Report: fix commit "Implement WGAN-GP grad penalty": the discriminator penalty now comes from autograd.grad(D_mix, inputs, create_graph=True) on interpolated inputs; nothing double-differentiable is written into p.grad
# Shape: same adversarial_imitation_update loop; create_graph=True is only used with autograd.grad whose results stay local and are reduced into a loss, plain backward() for the BCE terms
# Expect: near-miss: must be silent
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
                                 absorbing=False, grad_penalty=1.0, pos_class_prior=1.0):
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
        expert_loss.backward()
        policy_loss = F.binary_cross_entropy(D_policy, torch.zeros_like(D_policy))
        policy_loss.backward()

        if grad_penalty > 0:
            eps = torch.rand(expert_state.size(0), 1)
            mix_state = (eps * expert_state + (1 - eps) * policy_state).requires_grad_()
            mix_action = (eps * expert_action + (1 - eps) * policy_action).requires_grad_()
            D_mix = discriminator(mix_state, mix_action)
            grads = autograd.grad(D_mix, (mix_state, mix_action), torch.ones_like(D_mix),
                                  create_graph=True)  # input grads only, never stored in .grad
            gp_loss = sum(grad_penalty * (g.norm(2) ** 2).mean() for g in grads)
            gp_loss.backward()

        discriminator_optimiser.step()


def train_discriminator(discriminator, agent, expert_trajectories, policy_trajectories,
                        discriminator_optimiser, cfg):
    for _ in range(cfg.discriminator_epochs):
        adversarial_imitation_update(cfg.algorithm, agent, discriminator, expert_trajectories,
                                     policy_trajectories, discriminator_optimiser,
                                     cfg.batch_size, absorbing=cfg.absorbing,
                                     grad_penalty=cfg.grad_penalty)
