# Source: https://github.com/ulissigroup/amptorch/pull/13
# Report: the fix pre-generates the matrix as zeros and fills it in each iteration.
# Shape: the same loop writes each block into a preallocated tensor.
# Expect: near-miss: must be silent
import torch

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
fingerprints = torch.randn(24, 32, 16, device=device)
fprimes = torch.zeros(24 * 32, 16, device=device)
for atom in range(24):
    block = fingerprints[atom] * torch.linspace(0, 1, 16, device=device)
    fprimes[atom * 32:(atom + 1) * 32] = block
print(fprimes.shape)
