# Source: https://github.com/DAIRLab/dair_pll/pull/20
# Report: final evaluation of a learned dynamical system allocated huge amounts of memory: trajectory_predict kept the computation graph of every simulated trajectory of the whole dataset
# Shape: trajectory_predict appends each system.simulate(...) rollout (an nn.Module method, graph-attached) to a list returned to evaluate_systems_on_sets, which runs without no_grad; every rollout graph lives until all sets are done
# Expect: TML001 line 51
from typing import Dict, List, Tuple

import numpy as np
import torch
from torch import Tensor
from torch.nn import Module
from torch.utils.data import DataLoader


class System(Module):
    """Thin shell around an integrator; learnable when the integrator has parameters."""

    def __init__(self, integrator: Module, n_x: int) -> None:
        super().__init__()
        self.integrator = integrator
        self.n_x = n_x
        self.carry_callback = lambda: torch.zeros((1, 1))

    def simulate(self, x_0: Tensor, carry_0: Tensor, steps: int = 1) -> Tuple[Tensor, Tensor]:
        x = x_0[..., -1:, :]
        return self.integrator.simulate(x, carry_0, steps)


def to_json(value):
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value.detach().cpu().numpy()


class SupervisedLearningExperiment:
    def __init__(self, t_skip: int, t_prediction: int) -> None:
        self.t_skip = t_skip
        self.t_prediction = t_prediction

    def trajectory_predict(self, x: List[Tensor], system: System) -> Tuple[List[Tensor], List[Tensor]]:
        """Predict full trajectories from their first t_skip + 1 states."""
        t_begin = self.t_skip + 1
        x_0 = [x_i[..., :t_begin, :] for x_i in x]
        targets = [x_i[..., t_begin:, :] for x_i in x]
        horizons = [x_i.shape[-2] - t_begin for x_i in x]

        carry_0 = system.carry_callback()
        predictions = []
        for x_0_i, horizon_i in zip(x_0, horizons):
            x_prediction_i, carry_i = system.simulate(x_0_i, carry_0, horizon_i)
            del carry_i
            predictions.append(x_prediction_i[..., 1:, :])  # expect: TML001
        return predictions, targets

    def evaluate_systems_on_sets(self, systems: Dict[str, System], sets: Dict[str, list]) -> Dict[str, np.ndarray]:
        stats = {}
        for set_name, trajectories in sets.items():
            for system_name, system in systems.items():
                traj_pred, traj_target = self.trajectory_predict(trajectories, system)
                mse = torch.stack([((tp - tt) ** 2).sum(-1).mean() for tp, tt in zip(traj_pred, traj_target)])
                stats[f"{set_name}_{system_name}_trajectory_mse"] = to_json(mse)
                stats[f"{set_name}_{system_name}_prediction"] = to_json(traj_pred[:5])
        return stats

    def _evaluation(self, learned_system: System, oracle_system: System, sets: Dict[str, list]):
        systems = {"oracle": oracle_system, "model": learned_system}
        return self.evaluate_systems_on_sets(systems, sets)
