# Source: https://github.com/tsugumi-sys/SA-ConvLSTM-Pytorch/pull/31
# Report: the self-attention-memory ConvLSTM kept attention maps on the module during every forward; the PR only saves them when a flag asks for it
# Shape: same unrolled forward(), but attention rows are written only when save_attention_maps is set, and then detached, so no graph stays on the module between steps
# Expect: near-miss: must be silent
import torch
from torch import nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SAMConvLSTM(nn.Module):
    def __init__(self, cell, out_channels, save_attention_maps=False):
        super().__init__()
        self.save_attention_maps = save_attention_maps
        self.sam_convlstm_cell = cell
        self.out_channels = out_channels
        self._attention_scores = None

    @property
    def attention_scores(self):
        return self._attention_scores

    def forward(self, X, h=None, cell=None, memory=None):
        batch_size, _, seq_len, height, width = X.size()
        # Only the attention row of the centre pixel is kept, the full map is too big.
        self._attention_scores = torch.zeros((batch_size, seq_len, height * width), device=DEVICE)
        if h is None:
            h = torch.zeros((batch_size, self.out_channels, height, width), device=DEVICE)
        if cell is None:
            cell = torch.zeros((batch_size, self.out_channels, height, width), device=DEVICE)
        if memory is None:
            memory = torch.zeros((batch_size, self.out_channels, height, width), device=DEVICE)
        output = torch.zeros((batch_size, self.out_channels, seq_len, height, width), device=DEVICE)

        for time_step in range(seq_len):
            h, cell, memory, attention_h = self.sam_convlstm_cell(X[:, :, time_step], h, cell, memory)
            output[:, :, time_step] = h
            if self.save_attention_maps:
                self._attention_scores[:, time_step] = attention_h[:, attention_h.size(1) // 2].detach()
        return output


def train_epoch(model, loader, optimizer, loss_fn):
    model.train()
    running = 0.0
    for X, y in loader:
        X, y = X.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(len(loader), 1)
