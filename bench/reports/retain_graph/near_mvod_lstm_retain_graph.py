# Source: https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/31
# Report: video detector unrolls a Bottleneck LSTM over consecutive frames and calls loss.backward(retain_graph=True) per frame; the retained graphs of all earlier frames stay alive through the carried LSTM state
# Shape: same module-held LSTM state detached once per clip, but the per-frame losses are summed (reset per clip) and backpropagated once per clip, so no graph is retained
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class BottleneckLSTM(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gates = nn.Conv2d(2 * channels, 4 * channels, 3, padding=1)
        self.hidden_state = None
        self.cell_state = None

    def forward(self, x):
        if self.hidden_state is None:
            self.hidden_state = torch.zeros_like(x)
            self.cell_state = torch.zeros_like(x)
        i, f, o, g = self.gates(torch.cat([x, self.hidden_state], 1)).chunk(4, 1)
        c = torch.sigmoid(f) * self.cell_state + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        self.hidden_state, self.cell_state = h, c
        return h

    def detach_hidden(self):
        if self.hidden_state is not None:
            self.hidden_state = self.hidden_state.detach()
            self.cell_state = self.cell_state.detach()


class MobileVOD(nn.Module):
    def __init__(self, encoder, lstm, head):
        super().__init__()
        self.pred_encoder = encoder
        self.lstm = lstm
        self.pred_decoder = head

    def forward(self, image):
        feats = self.lstm(self.pred_encoder(image))
        return self.pred_decoder(feats)

    def detach_hidden(self):
        self.lstm.detach_hidden()


def train(loader, net, criterion, optimizer, device, debug_steps=100, epoch=-1):
    net.train(True)
    running_loss = 0.0
    for i, (images, boxes, labels) in enumerate(loader):
        optimizer.zero_grad()
        clip_loss = 0.0
        for image, box, label in zip(images, boxes, labels):
            image = image.to(device)
            box = box.to(device)
            label = label.to(device)

            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            clip_loss = clip_loss + regression_loss + classification_loss
        clip_loss.backward()
        optimizer.step()
        running_loss += clip_loss.item()
        net.detach_hidden()
        if i and i % debug_steps == 0:
            print(f"Epoch {epoch} step {i} loss {running_loss / debug_steps:.4f}")
            running_loss = 0.0
    net.detach_hidden()
