# Modelled on: https://github.com/NVlabs/stylegan3/issues/8
# Report: the common recipe copies the activation out with output.detach(), so no graph is kept.
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, stages, visualize_stage=None):
        super().__init__()
        self.stages = nn.ModuleList(stages)
        self.visualize_stage = visualize_stage
        self.features = {}

    def forward(self, x):
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i == self.visualize_stage:
                self.features["stage"] = x.detach().cpu()
        return x
