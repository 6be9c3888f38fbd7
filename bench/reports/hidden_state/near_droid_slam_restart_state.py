# Source: https://github.com/princeton-vl/DROID-SLAM/blob/main/train.py
# Report: DROID-SLAM training: within one batch the recurrent pose/depth refinement is restarted from its own last estimate (random restarts), with a backward per restart
# Shape: Gs and disp0 are loop-carried through the restart while-loop, but reassigned from poses_est[-1].detach() / disps_est[-1][...].detach(); the losses return metrics as .item() floats for the Logger
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn

SUM_FREQ = 100


class Logger:
    def __init__(self, name, scheduler):
        self.total_steps = 0
        self.running_loss = {}
        self.name = name
        self.scheduler = scheduler

    def _print_training_status(self):
        lr = self.scheduler.get_last_lr()[0]
        vals = ", ".join("%s %.4f" % (k, v / SUM_FREQ) for k, v in self.running_loss.items())
        print("[%6d, %10.7f] %s" % (self.total_steps + 1, lr, vals))

    def push(self, metrics):
        for key in metrics:
            if key not in self.running_loss:
                self.running_loss[key] = 0.0
            self.running_loss[key] += metrics[key]
        if self.total_steps % SUM_FREQ == SUM_FREQ - 1:
            self._print_training_status()
            self.running_loss = {}
        self.total_steps += 1


class DroidNet(nn.Module):
    """Stand-in for the update operator: returns num_steps refinements of the poses and disparities."""

    def __init__(self):
        super().__init__()
        self.fnet = nn.Conv2d(3, 32, 8, stride=8)
        self.update = nn.Linear(32 + 7, 32)
        self.delta = nn.Linear(32, 7 + 1)

    def forward(self, Gs, images, disp0, num_steps=15):
        b, n = images.shape[:2]
        fmap = self.fnet(images.flatten(0, 1)).mean((2, 3))
        net = torch.tanh(self.update(torch.cat([fmap, Gs.flatten(0, 1)], 1)))
        d = self.delta(net).view(b, n, 8)
        frac = torch.linspace(1.0 / num_steps, 1.0, num_steps, device=d.device)
        poses_est = [Gs + f * d[..., :7] for f in frac]
        disps_est = [disp0 + f * d[..., 7:, None, None] for f in frac]
        return poses_est, disps_est, d


def geodesic_loss(Ps, poses_est, gamma=0.9):
    n = len(poses_est)
    loss = sum(gamma ** (n - i - 1) * (poses_est[i] - Ps).abs().mean() for i in range(n))
    dE = (poses_est[-1] - Ps).detach()
    metrics = {"rot_error": dE[..., 3:].norm(dim=-1).mean().item(), "tr_error": dE[..., :3].norm(dim=-1).mean().item()}
    return loss, metrics


def flow_loss(disps, disps_est, gamma=0.9):
    n = len(disps_est)
    loss = sum(gamma ** (n - i - 1) * (disps_est[i] - disps).abs().mean() for i in range(n))
    return loss, {"f_error": (disps_est[-1] - disps).abs().mean().item()}


def train(loader, steps=250000, restart_prob=0.2, w1=10.0, w3=0.05, clip=2.5):
    rng = np.random.default_rng(12345)
    model = DroidNet().cuda()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=2.5e-4, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, 2.5e-4, steps, pct_start=0.01, cycle_momentum=False)
    logger = Logger("droid", scheduler)
    total_steps = 0
    while total_steps < steps:
        for images, poses, disps in loader:
            optimizer.zero_grad()
            images, poses, disps = images.cuda(), poses.cuda(), disps.cuda()
            Gs = torch.zeros_like(poses)
            Gs[:, 0] = poses[:, 0].clone()
            disp0 = torch.ones_like(disps[:, :, 3::8, 3::8])

            r = 0
            while r < restart_prob:
                r = rng.random()
                poses_est, disps_est, _ = model(Gs, images, disp0)
                geo_loss, geo_metrics = geodesic_loss(poses, poses_est)
                flo_loss, flo_metrics = flow_loss(disps[:, :, 3::8, 3::8], disps_est)
                loss = w1 * geo_loss + w3 * flo_loss
                loss.backward()

                Gs = poses_est[-1].detach()
                disp0 = disps_est[-1].detach()

            metrics = {}
            metrics.update(geo_metrics)
            metrics.update(flo_metrics)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            scheduler.step()
            total_steps += 1
            logger.push(metrics)
            if total_steps >= steps:
                break
