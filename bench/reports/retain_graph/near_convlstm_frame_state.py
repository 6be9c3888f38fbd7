# Source: https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/2
# Report: CNN features fed frame by frame into a ConvLSTM; backward() asked for retain_graph=True, and with it memory kept growing and training slowed down
# Shape: same frame-by-frame loop, but the carried (h, c) is detached after each step (truncated BPTT), so a plain backward() works and each frame's graph is freed
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch, hid_ch, kernel=3):
        super().__init__()
        self.hid_ch = hid_ch
        self.gates = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, kernel, padding=kernel // 2)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c

    def init_state(self, feat):
        b, _, height, width = feat.shape
        zeros = feat.new_zeros(b, self.hid_ch, height, width)
        return zeros, zeros.clone()


class FrameSegmenter(nn.Module):
    """Backbone features -> ConvLSTM -> 1x1 mask head, one frame per call."""

    def __init__(self, backbone, feat_ch=256, hid_ch=64):
        super().__init__()
        self.backbone = backbone
        self.cell = ConvLSTMCell(feat_ch, hid_ch)
        self.head = nn.Conv2d(hid_ch, 1, kernel_size=1)

    def forward(self, frame, state=None):
        feat = self.backbone(frame)
        if state is None:
            state = self.cell.init_state(feat)
        h, c = self.cell(feat, state)
        return self.head(h), (h, c)


def train_on_videos(model, video_loader, epochs=5, lr=1e-3, device="cuda"):
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    stats = {"loss": 0.0, "frames": 0}
    for epoch in range(epochs):
        for video, masks in video_loader:  # video: (1, T, 3, H, W), masks: (1, T, 1, h, w)
            video, masks = video.to(device), masks.to(device)
            state = None
            for t in range(video.size(1)):
                logits, state = model(video[:, t], state)
                loss = F.binary_cross_entropy_with_logits(logits, masks[:, t])
                opt.zero_grad()
                loss.backward()
                opt.step()
                # keep the memory of the previous frames, drop their graph
                state = tuple(s.detach() for s in state)
                stats["loss"] += loss.item()
                stats["frames"] += 1
        print(f"epoch {epoch}: mean frame loss {stats['loss'] / max(stats['frames'], 1):.4f}")
    return stats
