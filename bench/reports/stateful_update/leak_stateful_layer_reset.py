# Source: https://github.com/synsense/sinabs/issues/5
# Report: StatefulLayer.reset_states zeroed the state buffers in place, but the membrane-potential buffer rebound in forward still carried the previous batch's autograd history, so the next loss.backward() hit "backward through the graph a second time"; fixed by detach_() after the reset
# Shape: the spiking layer rebinds its registered state buffer to the last graph-attached membrane potential in forward; the per-batch reset only zeroes it in place
# Expect: TML005 line 46
import torch
import torch.nn as nn


class StatefulLayer(nn.Module):
    def __init__(self, state_names):
        super().__init__()
        for name in state_names:
            self.register_buffer(name, torch.zeros(0))

    def is_state_initialised(self):
        return all(b.numel() > 0 for b in self.buffers())

    def reset_states(self, randomize=False):
        if self.is_state_initialised():
            for buf in self.buffers():
                if randomize:
                    nn.init.uniform_(buf)
                else:
                    buf.zero_()


class LIFSqueeze(StatefulLayer):
    """Leaky integrate-and-fire over (batch, time, features) input."""

    def __init__(self, tau_mem=20.0, threshold=1.0):
        super().__init__(["v_mem"])
        self.alpha = float(torch.exp(torch.tensor(-1.0 / tau_mem)))
        self.threshold = threshold

    def forward(self, x):
        batch, steps, feat = x.shape
        if not self.is_state_initialised() or self.v_mem.shape != (batch, feat):
            self.v_mem = torch.zeros(batch, feat, device=x.device)
        v = self.v_mem
        out = []
        for t in range(steps):
            v = self.alpha * v + x[:, t]
            spk = torch.sigmoid(5.0 * (v - self.threshold))
            v = v - spk * self.threshold
            out.append(spk)
        self.v_mem = v  # expect: TML005
        return torch.stack(out, dim=1)


def fit(encoder, head, loader, epochs=3, device="cuda"):
    lif = LIFSqueeze().to(device)
    params = list(encoder.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=1e-2)
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            lif.reset_states()
            rates = lif(encoder(x)).mean(dim=1)
            loss = nn.functional.cross_entropy(head(rates), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return encoder, head
