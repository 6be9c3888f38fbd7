# Modelled on: https://github.com/HorizonRobotics/alf/pull/1532
# Report: GPU out of memory when loading checkpoints; map_location was only set when CUDA was unavailable.
from torch import load


class Checkpointer:
    def __init__(self, ckpt_dir, modules):
        self.ckpt_dir = ckpt_dir
        self.modules = modules

    def load(self, step):
        state = load(f"{self.ckpt_dir}/ckpt-{step}")  # expect: TML011
        for name, module in self.modules.items():
            module.load_state_dict(state[name])
        return state["global_step"]
