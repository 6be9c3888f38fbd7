# Modelled on: https://github.com/grey-eye/talking-heads/pull/7
# Report: the meta-training loop used retain_graph=True; removing it from the last backward saved memory.
import torch


class MetaTrainer:
    def __init__(self, E, G, D, opt_EG, opt_D):
        self.E, self.G, self.D = E, G, D
        self.opt_EG, self.opt_D = opt_EG, opt_D
        self.video_embeddings = {}

    def train_epoch(self, loader):
        for video_id, frames, landmarks, target in loader:
            e_hat = self.E(frames, landmarks).mean(dim=1)
            self.video_embeddings[video_id] = e_hat  # expect: TML001
            fake = self.G(target["landmarks"], e_hat)
            self.opt_EG.zero_grad()
            self.opt_D.zero_grad()
            loss_eg = -self.D(fake, target["landmarks"]).mean()
            loss_eg.backward(retain_graph=True)
            loss_d = torch.relu(1 + self.D(fake.detach(), target["landmarks"])).mean()
            loss_d = loss_d + torch.relu(1 - self.D(target["frame"], target["landmarks"])).mean()
            loss_d.backward(retain_graph=True)  # expect: TML006
            self.opt_EG.step()
            self.opt_D.step()
