# Source: https://github.com/metatensor/metatrain/issues/702
# Report: `mtt eval` memory grows with the number of evaluated structures until it crashes (also issue #1014: OOM on an H100 after ~100k structures); predictions are never detached
# Shape: grad stays on during eval (forces = -dE/dx need autograd), evaluate_model returns the model's energy with its grad_fn; _eval_targets appends each batch's prediction dict to all_predictions for the whole dataset
# Expect: TML001 line 79
import time

import torch


class RMSEAccumulator:
    def __init__(self):
        self.sq_err = {}
        self.count = {}

    def update(self, predictions, targets):
        for key, target in targets.items():
            err = ((predictions[key] - target) ** 2).sum().item()
            self.sq_err[key] = self.sq_err.get(key, 0.0) + err
            self.count[key] = self.count.get(key, 0) + target.numel()

    def finalize(self):
        return {k: (self.sq_err[k] / self.count[k]) ** 0.5 for k in self.sq_err}


def evaluate_model(model, positions, species, is_training=False):
    positions = positions.requires_grad_(True)
    energy = model(positions, species)
    (grad,) = torch.autograd.grad(
        energy.sum(), positions, create_graph=is_training
    )
    return {"energy": energy, "forces": -grad}


def average_by_num_atoms(tensors, n_atoms):
    out = dict(tensors)
    out["energy"] = tensors["energy"] / n_atoms
    return out


def _concatenate(prediction_list):
    keys = prediction_list[0].keys()
    return {k: torch.cat([p[k] for p in prediction_list]) for k in keys}


def _eval_targets(model, dataloader, device, return_predictions=True):
    model.to(device)
    rmse_accumulator = RMSEAccumulator()
    if return_predictions:
        all_predictions = []

    total_time = 0.0
    timings_per_atom = []

    # warm-up
    first = next(iter(dataloader))
    for _ in range(5):
        evaluate_model(model, first["positions"].to(device), first["species"].to(device))

    for batch in dataloader:
        positions = batch["positions"].to(device)
        species = batch["species"].to(device)
        targets = {
            "energy": batch["energy"].to(device),
            "forces": batch["forces"].to(device),
        }
        n_atoms = positions.shape[1]

        start = time.time()
        batch_predictions = evaluate_model(model, positions, species, is_training=False)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        elapsed = time.time() - start

        rmse_accumulator.update(
            average_by_num_atoms(batch_predictions, n_atoms),
            average_by_num_atoms(targets, n_atoms),
        )
        if return_predictions:
            all_predictions.append(batch_predictions)  # expect: TML001

        total_time += elapsed
        timings_per_atom.append(elapsed / n_atoms)

    metrics = rmse_accumulator.finalize()
    print(metrics, f"{total_time:.2f} s")
    if return_predictions:
        return _concatenate(all_predictions)
    return None
