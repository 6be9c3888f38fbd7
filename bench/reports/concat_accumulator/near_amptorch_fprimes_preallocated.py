# Source: https://github.com/ulissigroup/amptorch/issues/12
# Report: "torch.cat() bottleneck": the torch.cat call in factorize_data made performance suffer for large systems because every call creates a new tensor and copies both previous tensors into it; the fix pre-generates tensors of the proper size and fills them in each loop.
# Shape: a first pass counts the sparse entries, both index/value tensors are allocated once at full size, and each image writes into its own slice; the only torch.cat runs once after the loop on the list of per-image forces.
# Expect: near-miss: must be silent
import torch


def factorize_data(training_data):
    forcetraining = training_data[0][-1]
    unique_atoms, fingerprint_dataset, energy_dataset = [], [], []
    num_of_atoms = [float(len(image[0])) for image in training_data]

    image_forces, sparse_fprimes = None, None
    if forcetraining:
        total_entries = 0
        for image in training_data:
            image[3] = image[3].to_sparse()
            total_entries += len(image[3]._values())
        image_forces = []
        fprimes_inds = torch.zeros((2, total_entries), dtype=torch.int64)
        fprimes_vals = torch.zeros(total_entries)
        dim1_start = dim2_start = previous_entries = 0

    for image in training_data:
        image_fingerprint = image[0]
        fingerprint_dataset.append(image_fingerprint)
        for atom in image_fingerprint:
            if atom[0] not in unique_atoms:
                unique_atoms.append(atom[0])
        energy_dataset.append(image[1])
        if forcetraining:
            fprime = image[3]
            dim1, dim2 = fprime.shape
            s_fprime_inds = fprime._indices() + torch.tensor([[dim1_start], [dim2_start]])
            s_fprime_vals = fprime._values().float()
            num_entries = len(s_fprime_vals)
            fprimes_inds[:, previous_entries:previous_entries + num_entries] = s_fprime_inds
            fprimes_vals[previous_entries:previous_entries + num_entries] = s_fprime_vals
            previous_entries += num_entries
            dim1_start += dim1
            dim2_start += dim2
            image_forces.append(image[4])

    if forcetraining:
        sparse_fprimes = torch.sparse_coo_tensor(
            fprimes_inds, fprimes_vals, (dim1_start, dim2_start))
        image_forces = torch.cat(image_forces).float()

    return (sorted(set(unique_atoms)), fingerprint_dataset, energy_dataset,
            num_of_atoms, sparse_fprimes, image_forces)
