# Source: https://github.com/yjn870/SRCNN-pytorch/blob/7fb666916f126b0cbdff1b9ad6dc70ceea2fda08/train.py
# Report: audit: SRCNN's train.py feeds an AverageMeter (update does self.sum += val * n); it passes loss.item() in training and a no-grad PSNR tensor in eval, so it is safe; this is the variant it avoided, the attached MSE loss passed straight to the meter
# Shape: the meter is a small class in the same file, reset per epoch; update(loss, n) folds the graph-attached loss into self.sum before backward, so the meter's sum chains every step's graph until the epoch ends
# Expect: TML001 line 52
import copy
import os

import torch
import torch.optim as optim
from torch import nn
from tqdm import tqdm


def calc_psnr(img1, img2):
    return 10. * torch.log10(1. / torch.mean((img1 - img2) ** 2))


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(model, train_dataloader, eval_dataloader, args, device):
    criterion = nn.MSELoss()
    optimizer = optim.Adam([
        {"params": model.conv1.parameters()},
        {"params": model.conv2.parameters()},
        {"params": model.conv3.parameters(), "lr": args.lr * 0.1},
    ], lr=args.lr)
    best_weights, best_epoch, best_psnr = copy.deepcopy(model.state_dict()), 0, 0.0
    for epoch in range(args.num_epochs):
        model.train()
        epoch_losses = AverageMeter()
        with tqdm(total=len(train_dataloader.dataset)) as t:
            t.set_description(f"epoch: {epoch}/{args.num_epochs - 1}")
            for inputs, labels in train_dataloader:
                inputs, labels = inputs.to(device), labels.to(device)
                preds = model(inputs)
                loss = criterion(preds, labels)
                epoch_losses.update(loss, len(inputs))  # expect: TML001
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                t.set_postfix(loss=f"{float(epoch_losses.avg):.6f}")
                t.update(len(inputs))
        torch.save(model.state_dict(), os.path.join(args.outputs_dir, f"epoch_{epoch}.pth"))

        model.eval()
        epoch_psnr = AverageMeter()
        for inputs, labels in eval_dataloader:
            inputs, labels = inputs.to(device), labels.to(device)
            with torch.no_grad():
                preds = model(inputs).clamp(0.0, 1.0)
            epoch_psnr.update(calc_psnr(preds, labels), len(inputs))
        print(f"eval psnr: {epoch_psnr.avg:.2f}")
        if epoch_psnr.avg > best_psnr:
            best_epoch, best_psnr = epoch, float(epoch_psnr.avg)
            best_weights = copy.deepcopy(model.state_dict())
    print(f"best epoch: {best_epoch}, psnr: {best_psnr:.2f}")
    torch.save(best_weights, os.path.join(args.outputs_dir, "best.pth"))
