# Source: https://github.com/samuelyu2002/ImVisible/issues/2
# Report: training a traffic-light net exhausted RAM; the maintainer traced it to `running_loss += loss` (and the MSE / cross-entropy parts) keeping graphs, fixed with .item()
# Shape: the fix: the (loss, mse, ce) parts returned by my_loss are folded into the running totals with .item(), so the per-epoch history lists hold floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def my_loss(classifier, regression, points, mode, alpha=0.5):
    mse = nn.MSELoss()(regression, points)
    ce = nn.CrossEntropyLoss()(classifier, mode)
    loss = ce * alpha + mse * (1 - alpha)
    return loss, mse, ce


def direction_performance(pred_direc, points):
    diff = (pred_direc - points).abs().detach()
    return diff.mean().item(), diff[:, :2].mean().item(), diff[:, 2:].mean().item()


def main(net, train_dataset, max_epochs=800):
    train_dataloader = DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=8)
    net = net.cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=5e-6)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [150, 400, 650])

    train_losses = []  # overall training loss per epoch
    train_MSE = []
    train_CE = []
    train_accuracies = []

    for epoch in range(max_epochs):
        net.train()
        running_loss = 0.0
        running_loss_MSE = 0.0
        running_loss_cross_entropy = 0.0
        angle_error = 0.0
        train_correct = 0
        train_total = 0
        for data in train_dataloader:
            optimizer.zero_grad()
            train_total += 1
            images = data["image"].float().cuda()
            mode = data["mode"].cuda()
            points = data["points"].cuda()

            pred_classes, pred_direc = net(images)
            _, predicted = torch.max(pred_classes, 1)
            train_correct += (predicted == mode).sum().item()
            loss, MSE, cross_entropy = my_loss(pred_classes, pred_direc, points, mode)
            angle, _, _ = direction_performance(pred_direc, points)
            angle_error += angle
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            running_loss_MSE += MSE.item()
            running_loss_cross_entropy += cross_entropy.item()

        print(f"Epoch {epoch + 1}: loss {running_loss / train_total}")
        train_losses.append(running_loss / train_total)
        train_MSE.append(running_loss_MSE / train_total)
        train_CE.append(running_loss_cross_entropy / train_total)
        train_accuracies.append(train_correct / train_total / 32 * 100)
        scheduler.step()

    torch.save(net.state_dict(), "_final_weights")
    return train_losses, train_MSE, train_CE, train_accuracies
