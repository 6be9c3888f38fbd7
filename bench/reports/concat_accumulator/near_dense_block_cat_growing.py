# Source: https://discuss.pytorch.org/t/inplace-cat-buffer/75832
# Report: a dense MLP block re-concatenates its growing state with every layer's output (tensor = cat([tensor, cur_out])), blowing up memory with depth; answer: each step allocates a bigger input that must be kept for backward
# Shape: variant that keeps the per-layer outputs in a list local to forward, concatenates into a fresh layer input (not rebound to an accumulator) and once at the end
# Expect: near-miss: must be silent
import torch


class AbstractDenseNet(torch.nn.Module):
    def __init__(self, in_features: int, depth: int, width: int):
        super(AbstractDenseNet, self).__init__()
        self._depth = depth
        self._width = width
        self._in_features = in_features
        self._out_features = in_features + width * depth
        self.layers = torch.nn.ModuleList(
            self.get_layer(in_features=in_features + i * width, out_features=width)
            for i in range(depth)
        )

    @property
    def out_features(self) -> int:
        return self._out_features

    def get_layer(self, in_features: int, out_features: int) -> torch.nn.Module:
        raise NotImplementedError

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        cat_dim = len(tensor.size()) - 1
        features = [tensor]
        for i in range(self._depth):
            layer_in = torch.cat(features, dim=cat_dim)
            features.append(self.layers[i](layer_in))
        return torch.cat(features, dim=cat_dim)


class DenseMLP(AbstractDenseNet):
    def get_layer(self, in_features: int, out_features: int) -> torch.nn.Module:
        return torch.nn.Sequential(
            torch.nn.Linear(in_features, out_features),
            torch.nn.LayerNorm(out_features),
            torch.nn.GELU(),
        )
