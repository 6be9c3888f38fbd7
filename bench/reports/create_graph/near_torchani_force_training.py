# Source: https://github.com/aiqm/torchani/blob/025d79150c49d0835743466313ac2cf64aadab1f/examples/nnp_training_force.py
# Report: audited repository code (TorchANI force-training tutorial): forces are computed as -dE/dx with torch.autograd.grad(..., create_graph=True, retain_graph=True) so that the force loss can be backpropagated to the network parameters, then loss.backward() runs once per batch
# Shape: near-miss: keeps the tutorial's training step (autograd.grad with create_graph=True into a local, energy + force loss, zero_grad of both optimizers, one plain backward); the rewrite adds map_location to the checkpoint load and torch.no_grad() to validate(), which the original calls without it
# Expect: near-miss: must be silent
import math
import os

import torch
import torchani
import tqdm
from torchani.units import hartree2kcalmol

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
mse = torch.nn.MSELoss(reduction='none')
force_coefficient = 0.1
latest_checkpoint = 'force-training-latest.pt'


def resume(nn, AdamW, SGD):
    if os.path.isfile(latest_checkpoint):
        checkpoint = torch.load(latest_checkpoint, map_location=device)
        nn.load_state_dict(checkpoint['nn'])
        AdamW.load_state_dict(checkpoint['AdamW'])
        SGD.load_state_dict(checkpoint['SGD'])


@torch.no_grad()
def validate(model, validation):
    mse_sum = torch.nn.MSELoss(reduction='sum')
    total_mse = 0.0
    count = 0
    for atomic_properties, properties in validation:
        species = atomic_properties['species'].to(device)
        coordinates = atomic_properties['coordinates'].to(device)
        true_energies = properties['energies'].to(device).float()
        _, predicted_energies = model((species, coordinates))
        total_mse += mse_sum(predicted_energies, true_energies).item()
        count += predicted_energies.shape[0]
    return hartree2kcalmol(math.sqrt(total_mse / count))


def train_epoch(model, training, AdamW, SGD, tensorboard, epoch):
    for i, (atomic_properties, properties) in tqdm.tqdm(enumerate(training), total=len(training)):
        species = atomic_properties['species'].to(device)
        coordinates = atomic_properties['coordinates'].to(device).float().requires_grad_(True)
        true_energies = properties['energies'].to(device).float()
        true_forces = atomic_properties['forces'].to(device).float()
        num_atoms = (species >= 0).sum(dim=1, dtype=true_energies.dtype)
        _, predicted_energies = model((species, coordinates))

        # create the graph so the force loss reaches the parameters
        forces = -torch.autograd.grad(predicted_energies.sum(), coordinates,
                                      create_graph=True, retain_graph=True)[0]

        energy_loss = (mse(predicted_energies, true_energies) / num_atoms.sqrt()).mean()
        force_loss = (mse(true_forces, forces).sum(dim=(1, 2)) / num_atoms).mean()
        loss = energy_loss + force_coefficient * force_loss

        AdamW.zero_grad()
        SGD.zero_grad()
        loss.backward()
        AdamW.step()
        SGD.step()

        tensorboard.add_scalar('batch_loss', loss.item(), epoch * len(training) + i)
