# Source: https://github.com/TorchSim/torch-sim/pull/559
# Report: fixed torch-sim L-BFGS from #559: the new (s, y) pair is detached before it is concatenated into the history buffers, so no grad_fn chain links the steps
# Shape: same state object whose s_history is rebound from a cat of its previous value every lbfgs_step, but s_new is built with .detach()
# Expect: near-miss: must be silent
from dataclasses import dataclass

import torch


@dataclass
class LBFGSState:
    positions: torch.Tensor
    forces: torch.Tensor
    energy: torch.Tensor
    prev_positions: torch.Tensor
    prev_forces: torch.Tensor
    s_history: torch.Tensor
    y_history: torch.Tensor


def energy_and_forces(model, positions):
    positions.requires_grad_(True)
    energy = model(positions)
    forces = -torch.autograd.grad(energy.sum(), positions)[0]
    return energy.detach(), forces


def lbfgs_init(model, positions):
    energy, forces = energy_and_forces(model, positions)
    empty = positions.new_zeros((0, *positions.shape))
    return LBFGSState(positions, forces, energy, positions.clone(), forces.clone(), empty, empty.clone())


def two_loop_direction(grad, s_hist, y_hist, eps=1e-12):
    q, alphas = grad.clone(), []
    for s_i, y_i in zip(reversed(s_hist), reversed(y_hist)):
        rho = 1.0 / ((y_i * s_i).sum() + eps)
        alpha = rho * (s_i * q).sum()
        q = q - alpha * y_i
        alphas.append((rho, alpha))
    if len(s_hist) > 0:
        q = q * ((s_hist[-1] * y_hist[-1]).sum() / ((y_hist[-1] ** 2).sum() + eps))
    for (s_i, y_i), (rho, alpha) in zip(zip(s_hist, y_hist), reversed(alphas)):
        q = q + s_i * (alpha - rho * (y_i * q).sum())
    return -q


def lbfgs_step(state, model, max_history=20, max_step=0.2):
    step = two_loop_direction(-state.forces, state.s_history, state.y_history)
    scale = torch.clamp(max_step / (step.norm(dim=-1).max() + 1e-12), max=1.0)
    state.prev_positions = state.positions
    state.prev_forces = state.forces
    state.positions = (state.positions + scale * step).detach()
    state.energy, state.forces = energy_and_forces(model, state.positions)
    s_new = (state.positions - state.prev_positions).detach()
    y_new = (state.prev_forces - state.forces).detach()
    state.s_history = torch.cat([state.s_history, s_new.unsqueeze(0)], dim=0)[-max_history:]
    state.y_history = torch.cat([state.y_history, y_new.unsqueeze(0)], dim=0)[-max_history:]
    return state


def relax(model, positions, steps=500, fmax=0.05):
    state = lbfgs_init(model, positions)
    for _ in range(steps):
        state = lbfgs_step(state, model)
        if state.forces.norm(dim=-1).max() < fmax:
            break
    return state
