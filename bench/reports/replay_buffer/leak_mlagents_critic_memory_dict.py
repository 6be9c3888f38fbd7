# Source: https://github.com/Unity-Technologies/ml-agents/pull/5048
# Report: With LSTM policies, ML-Agents' PyTorch trainer stored the recurrent memory as a tensor that kept its gradient, so the next time it was used Torch tried to backprop through it and, for long episodes, the graph exploded (memory leak).
# Shape: reconstructed from the PR description: trajectory value estimation runs the recurrent critic with grad enabled and parks the final critic memory per agent in a dict; the agent's next trajectory starts from that stored tensor, so every stored entry keeps all earlier trajectories' critic graphs alive.
# Expect: TML001 line 36
from typing import Dict, List

import numpy as np
import torch


class RecurrentPPOOptimizer:
    def __init__(self, critic, memory_size: int):
        self.critic = critic
        self.memory_size = memory_size
        self.critic_memory_dict: Dict[str, torch.Tensor] = {}

    def _initial_memory(self, agent_id: str) -> torch.Tensor:
        if agent_id in self.critic_memory_dict:
            return self.critic_memory_dict[agent_id]
        return torch.zeros(1, 1, self.memory_size)

    def get_trajectory_value_estimates(self, agent_id: str, obs: List[np.ndarray],
                                       next_obs: np.ndarray, done: bool):
        obs_tensor = torch.as_tensor(np.stack(obs), dtype=torch.float32).unsqueeze(0)
        memory = self._initial_memory(agent_id)

        values, next_memory = self.critic(obs_tensor, memory, sequence_length=len(obs))
        next_obs_tensor = torch.as_tensor(next_obs, dtype=torch.float32).view(1, 1, -1)
        next_value, _ = self.critic(next_obs_tensor, next_memory, sequence_length=1)

        if done:
            self.critic_memory_dict.pop(agent_id, None)
            next_value = torch.zeros_like(next_value)
        else:
            # carry the critic's LSTM memory into this agent's next trajectory
            self.critic_memory_dict[agent_id] = next_memory  # expect: TML001

        return values.detach().cpu().numpy(), next_value.detach().cpu().numpy()
