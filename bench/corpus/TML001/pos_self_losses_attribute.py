# Modelled on: https://github.com/IBM/mi-prometheus/issues/111
# Report: one more 0-dim loss tensor stayed alive after every iteration because losses were kept on the object.
import torch
import torch.nn.functional as F


class Worker:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.losses = []

    def train_step(self, x, y):
        self.opt.zero_grad()
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        self.opt.step()
        self.losses.append(loss)  # expect: TML001
        return loss.item()
