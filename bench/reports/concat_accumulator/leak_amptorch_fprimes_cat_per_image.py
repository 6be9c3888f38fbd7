# Source: https://github.com/ulissigroup/amptorch/issues/12
# Report: "torch.cat() bottleneck": the torch.cat call in factorize_data made performance suffer for large systems because every call creates a new tensor and copies both previous tensors into it; the fix pre-generates tensors of the proper size and fills them in each loop.
# Shape: for every training image the sparse fingerprint-derivative indices and values are appended to two running tensors with torch.cat, so each iteration reallocates and copies everything gathered so far (quadratic copying, two live copies at each step).
# Expect: TML008 lines 32, 33
import torch


def factorize_data(training_data):
    forcetraining = training_data[0][-1]
    unique_atoms, fingerprint_dataset, energy_dataset = [], [], []
    num_of_atoms = [float(len(image[0])) for image in training_data]

    image_forces, sparse_fprimes = None, None
    if forcetraining:
        image_forces = []
        fprimes_inds = torch.zeros((2, 0), dtype=torch.int64)
        fprimes_vals = torch.zeros(0)
        dim1_start = dim2_start = 0

    for image in training_data:
        image_fingerprint = image[0]
        fingerprint_dataset.append(image_fingerprint)
        for atom in image_fingerprint:
            if atom[0] not in unique_atoms:
                unique_atoms.append(atom[0])
        energy_dataset.append(image[1])
        if forcetraining:
            fprime = image[3] if image[3].is_sparse else image[3].to_sparse()
            dim1, dim2 = fprime.shape
            s_fprime_inds = fprime._indices() + torch.tensor([[dim1_start], [dim2_start]])
            s_fprime_vals = fprime._values().float()
            fprimes_inds = torch.cat((fprimes_inds, s_fprime_inds), dim=1)  # expect: TML008
            fprimes_vals = torch.cat((fprimes_vals, s_fprime_vals))  # expect: TML008
            dim1_start += dim1
            dim2_start += dim2
            image_forces.append(image[4])

    if forcetraining:
        sparse_fprimes = torch.sparse_coo_tensor(
            fprimes_inds, fprimes_vals, (dim1_start, dim2_start))
        image_forces = torch.cat(image_forces).float()

    return (sorted(set(unique_atoms)), fingerprint_dataset, energy_dataset,
            num_of_atoms, sparse_fprimes, image_forces)
