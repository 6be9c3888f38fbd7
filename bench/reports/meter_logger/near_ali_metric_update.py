# Source: https://github.com/oval-group/mlogger/issues/3
# Report: GPU memory grew on every metric update() until CUDA OOM in an ALI/GAN training script; the autograd Variable was passed instead of its data
# Shape: same logger and loop, but the metrics are fed loss.data (the maintainer's fix, written with .detach()), so no graph reaches self._total
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class AvgMetric:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self._total = 0.0
        self._count = 0

    def update(self, value, n=1):
        self._total += value * n
        self._count += n

    def get(self):
        return self._total / max(self._count, 1)


class Experiment:
    def __init__(self, name, tags=("train", "val")):
        self.name = name
        self.metrics = {tag: {} for tag in tags}

    def add_metric(self, tag, name):
        metric = AvgMetric(name)
        self.metrics[tag][name] = metric
        return metric

    def log_with_tag(self, tag):
        values = {k: float(m.get()) for k, m in self.metrics[tag].items()}
        print(self.name, tag, values)
        for m in self.metrics[tag].values():
            m.reset()


def train_ali(gen_x, gen_z, disc, loader, opt_g, opt_d, nz, epochs, device="cuda"):
    xp = Experiment("ali-cifar10")
    d_meter = xp.add_metric("train", "loss_d")
    g_meter = xp.add_metric("train", "loss_g")

    for epoch in range(epochs):
        for x, _ in loader:
            x = x.to(device)
            bs = x.size(0)
            z = torch.randn(bs, nz, 1, 1, device=device)

            z_hat = gen_z(x)
            x_tilde = gen_x(z)
            d_real = disc(x, z_hat)
            d_fake = disc(x_tilde, z)
            ones = torch.ones_like(d_real)
            zeros = torch.zeros_like(d_fake)

            loss_d = F.binary_cross_entropy_with_logits(d_real, ones) + F.binary_cross_entropy_with_logits(d_fake, zeros)
            loss_g = F.binary_cross_entropy_with_logits(d_fake, ones) + F.binary_cross_entropy_with_logits(d_real, zeros)

            opt_d.zero_grad()
            loss_d.backward(retain_graph=True)
            opt_g.zero_grad()
            loss_g.backward()
            opt_d.step()
            opt_g.step()

            d_meter.update(loss_d.detach(), bs)
            g_meter.update(loss_g.detach(), bs)

        xp.log_with_tag("train")
