# Source: https://github.com/fangwei123456/spikingjelly/issues/310
# Report: training a spiking net ran out of CUDA memory inside the neuron's hard-reset of its membrane potential; the answer was that the net state was never reset between batches (functional.reset_net), so each batch's graph hung off the previous one
# Shape: the membrane potential is no longer kept on the module: it starts from v_reset inside every forward over the T time steps and is passed along explicitly, so nothing survives the batch
# Expect: near-miss: must be silent
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

    @staticmethod
    def hard_reset(v, spike, v_reset: float):
        return (1.0 - spike) * v + spike * v_reset

    def surrogate(self, x):
        sg = torch.sigmoid(self.alpha * x)
        return (x >= 0).to(x) - sg.detach() + sg

    def forward(self, x, v):
        v = v + (x - (v - self.v_reset)) / self.tau
        spike = self.surrogate(v - self.v_threshold)
        return spike, self.hard_reset(v, spike, self.v_reset)


class SpikingFC(nn.Module):
    def __init__(self, T, tau=2.0):
        super().__init__()
        self.T = T
        self.fc = nn.Linear(28 * 28, 10, bias=False)
        self.lif = LIFNode(tau=tau)

    def forward(self, img, encoder):
        x = img.flatten(1)
        v = torch.full((x.size(0), 10), self.lif.v_reset, device=x.device)
        out_fr = 0.0
        for t in range(self.T):
            spike, v = self.lif(self.fc(encoder(x)), v)
            out_fr = out_fr + spike
        return out_fr / self.T


def train_one_epoch(net, encoder, loader, optimizer, device):
    net.train()
    train_loss, train_acc, n = 0.0, 0.0, 0
    for img, label in loader:
        img, label = img.to(device), label.to(device)
        label_onehot = F.one_hot(label, 10).float()
        optimizer.zero_grad()
        out_fr = net(img, encoder)
        loss = F.mse_loss(out_fr, label_onehot)
        loss.backward()
        optimizer.step()
        n += label.numel()
        train_loss += loss.item() * label.numel()
        train_acc += (out_fr.argmax(1) == label).float().sum().item()
    return train_loss / n, train_acc / n
