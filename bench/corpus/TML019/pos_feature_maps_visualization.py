# Modelled on: https://github.com/ultralytics/yolov5/issues/3798
# Report: feature maps of a chosen stage are kept from the forward pass for visualisation.
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
                self.features["stage"] = x  # expect: TML019
        return x
