# Modelled on: https://github.com/grey-eye/talking-heads/pull/7
# Report: near-miss: two backward passes in one iteration, only the first keeps the graph.
import torch


def train_epoch(E, G, D, opt_EG, opt_D, loader):
    for frames, landmarks, target in loader:
        e_hat = E(frames, landmarks).mean(dim=1)
        fake = G(target["landmarks"], e_hat)
        opt_EG.zero_grad()
        opt_D.zero_grad()
        loss_eg = -D(fake, target["landmarks"]).mean()
        loss_eg.backward(retain_graph=True)
        loss_d = torch.relu(1 + D(fake, target["landmarks"])).mean()
        loss_d.backward()
        opt_EG.step()
        opt_D.step()
