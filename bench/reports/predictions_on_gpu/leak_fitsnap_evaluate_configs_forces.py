# Source: https://github.com/FitSNAP/FitSNAP/blob/ea3edfb89979ce2af4934e4f1fcb1ab0cbe161f0/fitsnap3lib/solvers/pytorch.py
# Report: FitSNAP issue #179 ("Don't store all model forces for NN error analysis"): evaluate_configs runs the NN potential on every configuration and keeps all energies and forces, which costs memory on large data sets
# Shape: the model forward computes forces with torch.autograd.grad(create_graph=True), so each returned energy/force is graph-attached; both are appended to lists that outlive the per-config loop, pinning every configuration's (double-backward) graph until the error analysis ends
# Expect: TML001 lines 79, 80
import numpy as np
import torch
from torch import nn


class FitTorch(nn.Module):
    """Per-atom network; energies summed per structure, forces from dE/dD contracted with dD/dR."""

    def __init__(self, n_desc, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_desc, hidden), nn.Softplus(), nn.Linear(hidden, 1))

    def forward(self, x, xd, indices, atoms_per_structure, unique_j, dtype=torch.float64):
        per_atom_energies = self.net(x).squeeze(-1)
        energy = torch.zeros(atoms_per_structure.size(), dtype=dtype, device=x.device)
        energy.index_add_(0, indices, per_atom_energies)
        dEdD = torch.autograd.grad(
            per_atom_energies, x, grad_outputs=torch.ones_like(per_atom_energies), create_graph=True
        )[0]
        contrib = torch.mul(xd, dEdD[unique_j])
        forces = torch.zeros(int(atoms_per_structure.sum()), x.size(1), dtype=dtype, device=x.device)
        forces = forces.index_add(0, unique_j, contrib).sum(dim=1)
        return energy, forces


class Config:
    def __init__(self, descriptors, dgrad, dgrad_indices, energy, forces, natoms, testing_bool):
        self.descriptors = descriptors
        self.dgrad = dgrad
        self.dgrad_indices = dgrad_indices
        self.energy = energy
        self.forces = forces
        self.natoms = natoms
        self.testing_bool = testing_bool


class PytorchSolver:
    def __init__(self, model, configs):
        self.model = model
        self.configs = configs

    def error_analysis(self):
        energies_model, forces_model = self.evaluate_configs(dtype=torch.float64)
        mae_e = {"train": 0.0, "test": 0.0}
        mae_f = {"train": 0.0, "test": 0.0}
        for m, c in enumerate(self.configs):
            e_pred = energies_model[m].detach().numpy() / c.natoms
            f_pred = forces_model[m].detach().numpy()
            key = "test" if c.testing_bool else "train"
            mae_e[key] += float(np.abs(c.energy - e_pred).sum())
            mae_f[key] += float(np.abs(np.asarray(c.forces) - f_pred).mean())
        return mae_e, mae_f

    def evaluate_configs(self, dtype=torch.float64, eval_device="cpu"):
        """Evaluate energies and forces on all configs for testing purposes."""
        self.model.to(dtype)
        self.model.to(eval_device)
        # only evaluate, no weight gradients
        self.model.eval()

        energies_configs = []
        forces_configs = []
        for config in self.configs:
            descriptors = torch.tensor(config.descriptors).requires_grad_(True)
            num_atoms = torch.tensor(config.natoms)
            dgrad = torch.tensor(config.dgrad)
            dbdrindx = torch.tensor(config.dgrad_indices).long()
            descriptors = descriptors.to(dtype)
            dgrad = dgrad.to(dtype)
            config_indices = torch.arange(1).long()
            indices = torch.repeat_interleave(config_indices, num_atoms)
            unique_j = dbdrindx[:, 1]

            energies, forces = self.model(descriptors, dgrad, indices, num_atoms.reshape(1), unique_j, dtype)
            energies_configs.append(energies)  # expect: TML001
            forces_configs.append(forces)  # expect: TML001

        return energies_configs, forces_configs
