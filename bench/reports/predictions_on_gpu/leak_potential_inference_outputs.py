# Source: https://github.com/MDIL-SNU/SevenNet/issues/187
# Report: sevenn_inference leaked GPU memory: every batch's model output (energies/forces, still attached) was split per structure and kept in output_list; fixed with .detach().cpu()
# Shape: inference loop over a graph loader (forces need autograd, so no no_grad); a helper splits the attached output into per-structure records that are extended into a list kept for the CSV
# Expect: TML001 line 63
import csv
import os

import torch
from torch_geometric.loader import DataLoader
from tqdm import tqdm


class RunningMAE:
    def __init__(self, key, ref_key):
        self.key, self.ref_key = key, ref_key
        self._sum, self._count = 0.0, 0

    def update(self, out):
        err = (out[self.key] - out[self.ref_key]).abs()
        self._sum += err.sum().item()
        self._count += err.numel()

    def get(self):
        return self._sum / max(self._count, 1)


def split_per_structure(out):
    sizes = out["num_atoms"].tolist()
    energies = torch.unbind(out["pred_energy"])
    forces = torch.split(out["pred_force"], sizes)
    return [
        {"energy": e, "forces": f, "num_atoms": n}
        for e, f, n in zip(energies, forces, sizes)
    ]


def write_csv(records, output_dir):
    with open(os.path.join(output_dir, "inference.csv"), "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["num_atoms", "energy", "max_force"])
        for r in records:
            writer.writerow([r["num_atoms"], float(r["energy"]), float(r["forces"].norm(dim=-1).max())])


def inference(model, dataset, output_dir, batch_size=8, device="cuda"):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    model.to(device)
    model.eval()
    recorders = [RunningMAE("pred_energy", "energy"), RunningMAE("pred_force", "force")]
    output_list = []

    for batch in tqdm(loader):
        batch = batch.to(device)
        batch.pos.requires_grad_(True)
        energy = model(batch)
        forces = -torch.autograd.grad(energy.sum(), batch.pos)[0]
        out = {
            "pred_energy": energy, "pred_force": forces, "num_atoms": batch.num_atoms,
            "energy": batch.energy, "force": batch.force,
        }
        for rec in recorders:
            rec.update(out)
        output_list.extend(split_per_structure(out))  # expect: TML001

    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "errors.txt"), "w") as fh:
        for rec in recorders:
            fh.write(f"{rec.key}: {rec.get():.6f}\n")
    write_csv(output_list, output_dir)
