# Source: https://github.com/BindsNET/bindsnet/pull/310
# Report: the fixed-time Monitor rebuilt its recording with torch.cat on every simulation step; the PR notes this "turned out to be a large amount of compute" and moved to a list
# Shape: Monitor.record() (called once per timestep by Network.run) replaces each state variable's window with torch.cat((window[1:], data)), copying the whole window every step
# Expect: TML008 line 30
from typing import Dict, Iterable

import torch


class Monitor:
    def __init__(self, obj, state_vars: Iterable[str], time: int, device: str = "cpu"):
        self.obj = obj
        self.state_vars = tuple(state_vars)
        self.time = time
        self.device = device
        # pre-allocate a [time, *shape] window per variable "for speed"
        self.recording: Dict[str, torch.Tensor] = {
            v: torch.zeros(time, *getattr(obj, v).shape,
                           dtype=getattr(obj, v).dtype, device=device)
            for v in self.state_vars
        }

    def get(self, var: str) -> torch.Tensor:
        return self.recording[var]

    def record(self) -> None:
        for v in self.state_vars:
            data = getattr(self.obj, v).unsqueeze(0).to(self.device)
            # drop the oldest slice and append the newest one
            self.recording[v] = torch.cat(  # expect: TML008
                (self.recording[v][1:].type(data.dtype), data), 0
            )

    def reset_state_variables(self) -> None:
        for v in self.state_vars:
            self.recording[v].zero_()


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
