# Source: https://github.com/mit-han-lab/temporal-shift-module/blob/1f6a834b02120441d99fa706b7a13ccc5293c6fa/online_demo/mobilenet_v2_tsm.py
# Report: TSM online gesture demo streams camera frames through MobileNetV2-TSM, feeding each step's shift buffers into the next (the repo runs this loop under torch.no_grad()); this variant runs it with grad enabled
# Shape: logits, *shift_buffer = net(img, *shift_buffer): each buffer is a channel slice of a block's activation, so frame t's graph links to frame t-1's; the chain grows for as long as the camera runs
# Expect: TML005 line 76; TML003 line 76
import torch
import torch.nn as nn

BUFFER_SHAPES = [(1, 3, 56, 56), (1, 4, 28, 28), (1, 4, 28, 28), (1, 8, 14, 14), (1, 8, 14, 14)]


def conv_bn(inp, oup, stride):
    return nn.Sequential(nn.Conv2d(inp, oup, 3, stride, 1, bias=False), nn.BatchNorm2d(oup), nn.ReLU6(inplace=True))


class InvertedResidualWithShift(nn.Module):
    def __init__(self, channels, expand_ratio=6):
        super().__init__()
        hidden = channels * expand_ratio
        self.conv = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, channels, 1, 1, 0, bias=False), nn.BatchNorm2d(channels),
        )

    def forward(self, x, shift_buffer):
        c = x.size(1)
        x1, x2 = x[:, : c // 8], x[:, c // 8:]
        # the cached 1/8 of the channels comes from the previous frame
        return x + self.conv(torch.cat((shift_buffer, x2), dim=1)), x1


class OnlineTSM(nn.Module):
    def __init__(self, features, last_channel, n_class=27):
        super().__init__()
        self.features = nn.ModuleList(features)
        self.classifier = nn.Linear(last_channel, n_class)

    def forward(self, x, *shift_buffer):
        idx = 0
        out_buffer = []
        for f in self.features:
            if isinstance(f, InvertedResidualWithShift):
                x, s = f(x, shift_buffer[idx])
                idx += 1
                out_buffer.append(s)
            else:
                x = f(x)
        x = x.mean(3).mean(2)
        return (self.classifier(x), *out_buffer)


def process_output(idx_, history, max_hist_len=20):
    # smooth the prediction over the last frames (majority vote)
    history.append(idx_)
    history = history[-max_hist_len:]
    return max(set(history[-3:]), key=history[-3:].count), history


def load_online_model(path):
    net = torch.load(path, map_location="cpu", weights_only=False)
    return net.cuda()


def run_camera(net, camera, transform, categories):
    net.eval()
    shift_buffer = [torch.zeros(shape, device="cuda") for shape in BUFFER_SHAPES]
    history = [2]
    i_frame = -1
    while True:
        ok, frame = camera.read()
        if not ok:
            break
        i_frame += 1
        if i_frame % 2 == 0:  # skip every other frame
            img = transform(frame).unsqueeze(0).cuda()
            logits, *shift_buffer = net(img, *shift_buffer)  # expect: TML005, TML003
            idx_ = int(torch.argmax(logits, dim=1).item())
            idx_, history = process_output(idx_, history)
            print(f"{i_frame}: {categories[idx_]}")
