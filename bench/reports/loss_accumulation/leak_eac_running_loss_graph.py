# Source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# Report: The facial-expression training loop summed the undetached loss into running_loss each batch, so autograd graphs piled up over the epoch until the user detached loss and predictions.
# Shape: train() adds the live combined loss (cross-entropy + flip-consistency term) into a running total that lives for the whole epoch and is returned to the caller.
# Expect: TML001 line 44
import torch
import torch.nn as nn
import torch.nn.functional as F


def flip_consistency_loss(hm1, hm2, grid):
    flipped = F.grid_sample(hm2, grid, align_corners=True)
    return F.mse_loss(hm1, flipped)


def make_flip_grid(w, h, device):
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
    grid = torch.stack([-xs, ys], dim=-1).unsqueeze(0)
    return grid.to(device)


def train(args, model, train_loader, optimizer, scheduler, device):
    model.to(device)
    model.train()
    running_loss = 0.0
    correct_sum = 0
    iter_cnt = 0
    ce = nn.CrossEntropyLoss()
    grid = make_flip_grid(args.w, args.h, device)

    for imgs1, labels, _, imgs2 in train_loader:
        imgs1, imgs2, labels = imgs1.to(device), imgs2.to(device), labels.to(device)

        output, hm1 = model(imgs1)
        _, hm2 = model(imgs2)
        loss = ce(output, labels) + args.lam * flip_consistency_loss(hm1, hm2, grid.expand(hm1.size(0), -1, -1, -1))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        iter_cnt += 1
        predicts = output.argmax(dim=1)
        correct_sum += torch.eq(predicts, labels).sum().item()
        running_loss += loss  # expect: TML001

    scheduler.step()
    acc = correct_sum / len(train_loader.dataset)
    return acc, running_loss / iter_cnt
