# Source: https://github.com/TorchSim/torch-sim/pull/564
# Report: with a model that keeps its autograd graph (retain_graph), every MD/optimizer step builds on the previous SimState's tensors, so the graph chain grows and long runs slow down; fix detaches the state after each step
# Shape: as in the fix, the state dataclass gets a detach_() that detaches every field, called right after each step when the model retains its graph
# Expect: near-miss: must be silent
from dataclasses import dataclass

import torch


@dataclass
class SimState:
    positions: torch.Tensor
    momenta: torch.Tensor
    masses: torch.Tensor
    forces: torch.Tensor
    energy: torch.Tensor

    def detach_(self) -> "SimState":
        for name in ("positions", "momenta", "masses", "forces", "energy"):
            setattr(self, name, getattr(self, name).detach())
        return self


class MLPotential(torch.nn.Module):
    def __init__(self, net, retain_graph=True):
        super().__init__()
        self.net = net
        self.retain_graph = retain_graph

    def forward(self, positions):
        if not positions.requires_grad:
            positions = positions.requires_grad_(True)
        energy = self.net(positions).sum()
        forces = -torch.autograd.grad(energy, positions, create_graph=self.retain_graph)[0]
        return {"energy": energy, "forces": forces}


def velocity_verlet_step(state: SimState, model: MLPotential, dt: float) -> SimState:
    momenta = state.momenta + 0.5 * dt * state.forces
    positions = state.positions + dt * momenta / state.masses.unsqueeze(-1)
    out = model(positions)
    momenta = momenta + 0.5 * dt * out["forces"]
    return SimState(positions, momenta, state.masses, out["forces"], out["energy"])


def integrate(positions, masses, model, n_steps=100_000, dt=1e-3, report_every=100):
    positions = positions.cuda()
    masses = masses.cuda()
    out = model(positions)
    state = SimState(
        positions=positions,
        momenta=torch.zeros_like(positions),
        masses=masses,
        forces=out["forces"],
        energy=out["energy"],
    )
    energies = []
    for step in range(1, n_steps + 1):
        state = velocity_verlet_step(state, model, dt)
        if model.retain_graph:
            state.detach_()
        if step % report_every == 0:
            energies.append(state.energy.item())
    return state, energies
