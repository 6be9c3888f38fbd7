# Source: https://github.com/ajhamdi/MVTN/issues/2
# Report: multi-view training got "killed" in the second epoch; the maintainer fixed train() by accumulating total_loss += loss.item() (commit 4c5da6b)
# Shape: only the Python float from loss.item() is added into total_loss, so each batch's loss tensor is freed after backward; avg_loss is a float
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

criterion = nn.CrossEntropyLoss()
writer = SummaryWriter("runs/mvtn")


class ViewSelector(nn.Module):
    def __init__(self, nb_views=12):
        super().__init__()
        self.head = nn.Linear(3, nb_views * 3)
        self.nb_views = nb_views

    def forward(self, points, c_batch_size):
        params = self.head(points.mean(1)).view(c_batch_size, self.nb_views, 3)
        return params[..., 0], params[..., 1], params[..., 2]


def regularize_views(images, crop_ratio):
    h = int(images.shape[-1] * crop_ratio)
    return images[..., :h, :h]


def train_one_epoch(data_loader, models_bag, setup):
    total = 0.0
    correct = 0.0
    total_loss = 0.0
    n = 0
    for i, (targets, meshes, points) in enumerate(data_loader):
        c_batch_size = targets.shape[0]
        models_bag["optimizer"].zero_grad()
        if setup["is_learning_views"]:
            models_bag["mvtn_optimizer"].zero_grad()

        azim, elev, dist = models_bag["mvtn"](points, c_batch_size=c_batch_size)
        rendered = models_bag["renderer"](meshes, points, azim=azim, elev=elev, dist=dist)
        rendered = regularize_views(rendered, setup["crop_ratio"])
        targets = targets.cuda()
        outputs = models_bag["mvnetwork"](rendered)[0]
        loss = criterion(outputs, targets)
        _, predicted = torch.max(outputs.data, 1)
        total += targets.size(0)

        loss.backward()
        models_bag["optimizer"].step()
        if setup["is_learning_views"]:
            models_bag["mvtn_optimizer"].step()
            if setup["log_metrics"]:
                step = i + setup["epoch"] * len(data_loader)
                writer.add_scalar("Zoom/loss", loss.item(), step)

        if (i + 1) % setup["print_freq"] == 0:
            print("\tIter [%d/%d] Loss: %.4f" % (i + 1, len(data_loader), loss.item()))
        correct += (predicted.cpu() == targets.cpu()).sum()
        total_loss += loss.item()
        n += 1
    avg_loss = total_loss / n
    avg_acc = 100 * correct / total
    return avg_acc, avg_loss


def run(setup, models_bag, train_loader):
    for epoch in range(setup["epochs"]):
        setup["epoch"] = epoch
        models_bag["mvnetwork"].train()
        models_bag["mvtn"].train()
        acc, avg_loss = train_one_epoch(train_loader, models_bag, setup)
        print("epoch %d acc %.2f loss %.4f" % (epoch, acc.item(), avg_loss))
        writer.add_scalar("Loss/train", avg_loss, epoch)
