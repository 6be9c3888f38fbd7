# Source: https://github.com/ulissigroup/amptorch/issues/12
# Report: torch.cat in a data-factorizing loop was a bottleneck: every call creates a new tensor and copies the previous ones into it; the fix preallocates and fills in each iteration.
# Shape: the derivative blocks of each atom are concatenated onto a growing tensor inside the loop.
# Expect: TML008 line 13
import torch

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
fingerprints = torch.randn(24, 32, 16, device=device)
fprimes = torch.empty(0, 16, device=device)
for atom in range(24):
    block = fingerprints[atom] * torch.linspace(0, 1, 16, device=device)
    fprimes = torch.cat((fprimes, block), dim=0)  # expect: TML008
print(fprimes.shape)
