# Source: https://github.com/yikang-li/MSDN/issues/13
# Report: GPU memory leaks during evaluation; the reporter traces it to RoIPoolFunction.forward assigning self.output/self.argmax/self.rois (commenting them out fixes it)
# Shape: written with the current autograd.Function API: forward stores its output, argmax and rois as ctx attributes; output's grad_fn is this ctx, so output and ctx form a cycle only the garbage collector frees
# Expect: TML018 lines 35, 36, 37
import torch
import torch.nn as nn
from torch.autograd import Function


def roi_max_pool(features, rois, ph, pw, scale):
    """Reference max RoI pooling that also returns the flat argmax per bin."""
    n, c = rois.size(0), features.size(1)
    out = features.new_zeros(n, c, ph, pw)
    arg = torch.zeros(n, c, ph, pw, dtype=torch.int64, device=features.device)
    for i, (b, x1, y1, x2, y2) in enumerate(rois.tolist()):
        x1, y1, x2, y2 = [int(round(v * scale)) for v in (x1, y1, x2, y2)]
        crop = features[int(b), :, y1:y2 + 1, x1:x2 + 1]
        pooled, idx = nn.functional.adaptive_max_pool2d(crop, (ph, pw), return_indices=True)
        out[i], arg[i] = pooled, idx
    return out, arg


def roi_max_unpool(grad_output, rois, argmax, feature_size):
    grad_input = grad_output.new_zeros(feature_size)
    flat = grad_input.view(feature_size[0], feature_size[1], -1)
    for i, b in enumerate(rois[:, 0].long().tolist()):
        flat[b].scatter_add_(1, argmax[i].view(feature_size[1], -1), grad_output[i].view(feature_size[1], -1))
    return grad_input


class RoIPoolFunction(Function):
    @staticmethod
    def forward(ctx, features, rois, pooled_height, pooled_width, spatial_scale):
        output, argmax = roi_max_pool(features, rois, pooled_height, pooled_width, spatial_scale)
        ctx.output = output  # expect: TML018
        ctx.argmax = argmax  # expect: TML018
        ctx.rois = rois  # expect: TML018
        ctx.feature_size = features.size()
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = roi_max_unpool(grad_output, ctx.rois, ctx.argmax, ctx.feature_size)
        return grad_input, None, None, None, None


class RoIPool(nn.Module):
    def __init__(self, pooled_height, pooled_width, spatial_scale):
        super().__init__()
        self.pooled_height = int(pooled_height)
        self.pooled_width = int(pooled_width)
        self.spatial_scale = float(spatial_scale)

    def forward(self, features, rois):
        return RoIPoolFunction.apply(features, rois, self.pooled_height,
                                     self.pooled_width, self.spatial_scale)
