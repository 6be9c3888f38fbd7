# Source: https://github.com/lab-cosmo/torch_spex/blob/03468e80392d47d1829078e802534186e09a011b/examples/alchemical_model.py
# Report: audited example: Model.predict_epoch runs the alchemical power-spectrum potential with grad enabled (forces need autograd.grad) and appends each batch's predicted energies and forces to lists before concatenating them.
# Shape: grad must stay enabled for the forces, so no no_grad here; each batch's energies and forces are detached and copied to the host before they are kept, and the metrics are computed on the CPU.
# Expect: near-miss: must be silent
import torch

from torch_spex.forces import compute_forces
from torch_spex.structures import ase_atoms_to_tensordict

device = "cuda" if torch.cuda.is_available() else "cpu"


def get_rmse(first, second):
    return torch.sqrt(torch.mean((first - second) ** 2))


class Model(torch.nn.Module):
    def __init__(self, spherical_expansion_calculator, ps_calculator, readout, do_forces):
        super().__init__()
        self.spherical_expansion_calculator = spherical_expansion_calculator
        self.ps_calculator = ps_calculator
        self.readout = readout
        self.do_forces = do_forces

    def forward(self, structures, is_training=True):
        structures = ase_atoms_to_tensordict(structures, device=device)
        if self.do_forces:
            structures["positions"].requires_grad = True
        spherical_expansion = self.spherical_expansion_calculator(structures)
        ps = self.ps_calculator(spherical_expansion)
        energies = self.readout(ps, structures["n_structures"].item())
        if self.do_forces:
            forces = compute_forces(energies, structures["positions"], is_training=is_training)
        else:
            forces = None
        return energies, forces

    def predict_epoch(self, data_loader):
        predicted_energies = []
        predicted_forces = []
        for batch in data_loader:
            # grad stays enabled: the forces are -dE/dr
            predicted_energies_batch, predicted_forces_batch = self(batch, is_training=False)
            predicted_energies.append(predicted_energies_batch.detach().cpu())
            predicted_forces.append(predicted_forces_batch.detach().cpu())

        predicted_energies = torch.concatenate(predicted_energies, dim=0)
        predicted_forces = torch.concatenate(predicted_forces, dim=0)
        return predicted_energies, predicted_forces


def report(model, loader, energies, forces, epoch):
    predicted_energies, predicted_forces = model.predict_epoch(loader)
    print(f"Epoch {epoch}: energy RMSE {get_rmse(predicted_energies, energies.cpu())}, "
          f"force RMSE {get_rmse(predicted_forces, forces.cpu())}")
