# Source: https://github.com/growingnet/gromo/issues/135
# Report: the fix (merged in #138) stores the detached activity.
# Shape: same module and statistics switch; forward keeps a detached copy of the activity on self.
# Expect: near-miss: must be silent
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
            self.activity = y.detach()
        return y

    def update_statistics(self, tensor_s):
        flat = self.activity.flatten(0, -2)
        tensor_s += flat.T @ flat / flat.shape[0]
        return tensor_s
