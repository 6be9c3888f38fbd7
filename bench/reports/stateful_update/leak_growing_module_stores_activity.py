# Source: https://github.com/growingnet/gromo/issues/135
# Report: MergeGrowingModule.forward stored its output in self.activity without detaching it, a memory leak: the stored activity kept the forward graph alive.
# Shape: when statistics collection is switched on, forward keeps the post-merge activity (a graph value) on self for the statistics update that runs later.
# Expect: TML019 line 19
import torch
import torch.nn as nn


class MergeGrowingModule(nn.Module):
    def __init__(self, post_merge_function=None):
        super().__init__()
        self.post_merge_function = post_merge_function or nn.Identity()
        self.store_activity = False
        self.activity = None

    def forward(self, x):
        y = self.post_merge_function(x)
        if self.store_activity:
            self.activity = y  # expect: TML019
        return y

    def update_statistics(self, tensor_s):
        flat = self.activity.flatten(0, -2)
        tensor_s += flat.T @ flat / flat.shape[0]
        return tensor_s
