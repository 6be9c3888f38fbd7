# Source: https://github.com/stigma0617/VoVNet.pytorch/pull/5
# Report: a "cleanup" of the OSA block replaced the list of feature maps with a running torch.cat inside the layer loop; the author then found it slower ("torch.cat has more overhead than append")
# Shape: forward() grows `output` by concatenating every layer's feature map onto it inside the loop, so each step copies everything gathered so far
# Expect: TML008 line 38
import torch
import torch.nn as nn


def conv3x3(in_ch, out_ch, name):
    return [
        (f"{name}_conv", nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False)),
        (f"{name}_norm", nn.BatchNorm2d(out_ch)),
        (f"{name}_relu", nn.ReLU(inplace=True)),
    ]


class OSAModule(nn.Module):
    def __init__(self, in_ch, stage_ch, concat_ch, layer_per_block, name, identity=False):
        super().__init__()
        self.identity = identity
        self.layers = nn.ModuleList()
        ch = in_ch
        for i in range(layer_per_block):
            self.layers.append(nn.Sequential(*[m for _, m in conv3x3(ch, stage_ch, f"{name}_{i}")]))
            ch = stage_ch
        total = in_ch + layer_per_block * stage_ch
        self.concat = nn.Sequential(
            nn.Conv2d(total, concat_ch, 1, bias=False),
            nn.BatchNorm2d(concat_ch),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        identity_feat = x
        output = x
        for layer in self.layers:
            x = layer(x)
            output = torch.cat((output, x), dim=1)  # expect: TML008
        out = self.concat(output)
        if self.identity:
            out = out + identity_feat
        return out


class OSAStage(nn.Sequential):
    def __init__(self, in_ch, stage_ch, concat_ch, blocks, layers, stage_num):
        super().__init__()
        if stage_num != 2:
            self.add_module("pooling", nn.MaxPool2d(3, 2, ceil_mode=True))
        self.add_module(f"OSA{stage_num}_1",
                        OSAModule(in_ch, stage_ch, concat_ch, layers, f"OSA{stage_num}_1"))
        for i in range(blocks - 1):
            self.add_module(f"OSA{stage_num}_{i + 2}",
                            OSAModule(concat_ch, stage_ch, concat_ch, layers,
                                      f"OSA{stage_num}_{i + 2}", identity=True))
