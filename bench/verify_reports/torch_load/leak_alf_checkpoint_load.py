# Source: https://github.com/HorizonRobotics/alf/pull/1532
# Report: loading checkpoints surged GPU memory until out of memory; the fix always uses map_location=torch.device('cpu') instead of None when CUDA is available.
# Shape: a checkpointer class loads its file with map_location None whenever CUDA is available, then merges the state into a model.
# Expect: TML011 line 26
import os
import tempfile

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Checkpointer:
    def __init__(self, folder):
        self.path = os.path.join(folder, "ckpt-100")

    def save(self, module):
        torch.save({"module": module.state_dict(), "global_step": 100}, self.path)

    def load(self, module):
        map_location = None
        if not torch.cuda.is_available():
            map_location = torch.device("cpu")
        checkpoint = torch.load(self.path, map_location=map_location)  # expect: TML011
        module.load_state_dict(checkpoint["module"])
        return checkpoint["global_step"]


algorithm = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 8)).to(device)
checkpointer = Checkpointer(tempfile.mkdtemp())
checkpointer.save(algorithm)
step = checkpointer.load(algorithm)
print(step)
