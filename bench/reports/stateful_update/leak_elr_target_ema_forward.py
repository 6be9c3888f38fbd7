# Source: https://github.com/AllenPu/imbalanced-contrastive-ordinary-regression/blob/d6d7595fe1f356d7e723d0ba228b4a1afd8284ed/agedb/elr.py
# Report: audit of the early-learning-regularization loss used in an age-regression repo: forward keeps a per-sample target table on the module and refreshes the rows of the batch as an EMA of the softmax; the repo takes y_pred.data.detach() first, this is the variant it avoided, where the EMA is written from the attached softmax so the table links every step's graph (the next step's regulariser reads those rows and backpropagates into the freed graph: 'backward through the graph a second time')
# Shape: elr_loss nn.Module with self.target (num_examp x num_classes, on the GPU) updated in forward via self.target[index] = beta * self.target[index] + (1 - beta) * normalised y_pred; the train loop adds the ELR term to an L1 age loss and logs floats through a small meter
# Expect: TML005 line 24; TML019 line 24
import torch
import torch.nn as nn
import torch.nn.functional as F


class elr_loss(nn.Module):
    def __init__(self, num_examp, num_classes=3, lambdas=3.0, beta=0.7):
        super().__init__()
        self.num_classes = num_classes
        self.use_cuda = torch.cuda.is_available()
        table = torch.zeros(num_examp, num_classes)
        self.target = table.cuda() if self.use_cuda else table
        self.beta = beta
        self.lambdas = lambdas

    def forward(self, index, output):
        y_pred = F.softmax(output, dim=1)
        y_pred = torch.clamp(y_pred, 1e-4, 1.0 - 1e-4)
        y_norm = y_pred / y_pred.sum(dim=1, keepdim=True)
        self.target[index] = self.beta * self.target[index] + (1 - self.beta) * y_norm  # expect: TML005, TML019
        elr_reg = (1 - (self.target[index] * y_pred).sum(dim=1)).log().mean()
        return self.lambdas * elr_reg


class Meter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)


def train_one_epoch(model, loader, optimizer, elr, epoch, device="cuda"):
    model.train()
    l1_meter, elr_meter = Meter(), Meter()
    for step, (images, ages, index) in enumerate(loader):
        images, ages, index = images.to(device), ages.to(device).float(), index.to(device)
        age_pred, group_logits = model(images)
        l1 = F.l1_loss(age_pred.squeeze(1), ages)
        reg = elr(index, group_logits)
        loss = l1 + reg
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        l1_meter.update(l1.item(), images.size(0))
        elr_meter.update(reg.item(), images.size(0))
        if step % 50 == 0:
            print(f"epoch {epoch} step {step}: l1 {l1_meter.avg:.3f} elr {elr_meter.avg:.3f}")
    return {"l1": l1_meter.avg, "elr": elr_meter.avg}


def fit(model, train_loader, epochs=90, lr=1e-3, device="cuda"):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    elr = elr_loss(len(train_loader.dataset), num_classes=3)
    history = []
    for epoch in range(epochs):
        history.append(train_one_epoch(model, train_loader, optimizer, elr, epoch, device))
    return history
