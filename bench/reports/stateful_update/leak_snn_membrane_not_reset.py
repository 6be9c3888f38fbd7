# Source: https://github.com/fangwei123456/spikingjelly/issues/310
# Report: training a spiking net ran out of CUDA memory inside the neuron's hard-reset of its membrane potential; the answer was that the net state was never reset between batches (functional.reset_net), so each batch's graph hung off the previous one
# Shape: the LIF neuron rebinds self.v in forward from a value computed from the old self.v, and nothing resets it between batches of the training loop
# Expect: TML005 line 33
import torch
import torch.nn as nn
import torch.nn.functional as F


class LIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0, v_reset=0.0, alpha=4.0):
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.alpha = alpha
        self.v = v_reset

    @staticmethod
    def hard_reset(v, spike, v_reset: float):
        return (1.0 - spike) * v + spike * v_reset

    def surrogate(self, x):
        # heaviside forward, sigmoid gradient
        sg = torch.sigmoid(self.alpha * x)
        return (x >= 0).to(x) - sg.detach() + sg

    def forward(self, x):
        if not isinstance(self.v, torch.Tensor):
            self.v = torch.full_like(x, self.v_reset)
        v = self.v + (x - (self.v - self.v_reset)) / self.tau
        spike = self.surrogate(v - self.v_threshold)
        self.v = self.hard_reset(v, spike, self.v_reset)  # expect: TML005
        return spike


def train_one_epoch(net, encoder, loader, optimizer, T, device):
    net.train()
    train_loss, train_acc, n = 0.0, 0.0, 0
    for img, label in loader:
        img, label = img.to(device), label.to(device)
        label_onehot = F.one_hot(label, 10).float()
        optimizer.zero_grad()
        out_fr = 0.0
        for t in range(T):
            out_fr = out_fr + net(encoder(img))
        out_fr = out_fr / T
        loss = F.mse_loss(out_fr, label_onehot)
        loss.backward()
        optimizer.step()
        # no functional.reset_net(net) here: every LIFNode keeps its v
        n += label.numel()
        train_loss += loss.item() * label.numel()
        train_acc += (out_fr.argmax(1) == label).float().sum().item()
    return train_loss / n, train_acc / n


def build_net(tau=2.0):
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(28 * 28, 10, bias=False),
        LIFNode(tau=tau),
    )
