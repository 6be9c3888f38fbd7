# Source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# Report: The facial-expression training loop summed the undetached loss into running_loss each batch, so autograd graphs piled up over the epoch until the user detached loss and predictions.
# Shape: the reporter's fix: the running total is still a device tensor that is added to every batch, but only loss.detach() goes into it, so no graph outlives the step.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def flip_consistency_loss(hm1, hm2, grid):
    flipped = F.grid_sample(hm2, grid, align_corners=True)
    return F.mse_loss(hm1, flipped)


def train(args, model, train_loader, optimizer, scheduler, device, grid):
    model.to(device)
    model.train()
    running_loss = torch.zeros((), device=device)
    correct_sum = torch.zeros((), dtype=torch.long, device=device)
    iter_cnt = 0
    ce = nn.CrossEntropyLoss()

    for imgs1, labels, _, imgs2 in train_loader:
        imgs1, imgs2, labels = imgs1.to(device), imgs2.to(device), labels.to(device)

        output, hm1 = model(imgs1)
        _, hm2 = model(imgs2)
        loss = ce(output, labels) + args.lam * flip_consistency_loss(hm1, hm2, grid)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        iter_cnt += 1
        loss = loss.detach()
        predicts = output.detach().argmax(dim=1)
        correct_sum += torch.eq(predicts, labels).sum()
        running_loss += loss

    scheduler.step()
    acc = correct_sum.item() / len(train_loader.dataset)
    return acc, (running_loss / iter_cnt).item()
