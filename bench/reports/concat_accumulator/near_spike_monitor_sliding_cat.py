# Source: https://github.com/BindsNET/bindsnet/pull/310
# Report: the fixed-time Monitor rebuilt its recording with torch.cat on every simulation step; the PR notes this "turned out to be a large amount of compute" and moved to a list
# Shape: fixed variant: each step's slice goes into a bounded deque(maxlen=time) and torch.cat runs once, only when the recording is read
# Expect: near-miss: must be silent
from collections import deque
from typing import Deque, Dict, Iterable

import torch


class Monitor:
    def __init__(self, obj, state_vars: Iterable[str], time: int, device: str = "cpu"):
        self.obj = obj
        self.state_vars = tuple(state_vars)
        self.time = time
        self.device = device
        self.recording: Dict[str, Deque[torch.Tensor]] = {
            v: deque(maxlen=time) for v in self.state_vars
        }

    def get(self, var: str) -> torch.Tensor:
        return torch.cat(list(self.recording[var]), 0)

    def record(self) -> None:
        for v in self.state_vars:
            data = getattr(self.obj, v).unsqueeze(0)
            # keep only the last `time` slices; the oldest one falls off by itself
            self.recording[v].append(data.detach().clone().to(self.device))

    def reset_state_variables(self) -> None:
        for v in self.state_vars:
            self.recording[v].clear()


class Network:
    def __init__(self, layers, dt: float = 1.0):
        self.layers = layers
        self.dt = dt
        self.monitors: Dict[str, Monitor] = {}

    def add_monitor(self, monitor: Monitor, name: str) -> None:
        self.monitors[name] = monitor

    @torch.no_grad()
    def run(self, inputs: Dict[str, torch.Tensor], time: int) -> None:
        for t in range(time):
            for name, layer in self.layers.items():
                layer.forward(x=inputs[name][t] if name in inputs else None)
            for monitor in self.monitors.values():
                monitor.record()
