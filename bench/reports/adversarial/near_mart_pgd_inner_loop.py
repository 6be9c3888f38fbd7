# Source: https://github.com/YisenWang/MART/blob/master/mart.py
# Report: MART adversarial training: mart_loss() builds the PGD example inside the loss helper (model.eval(), perturb_steps of autograd.grad on x_adv) and returns the robust loss to train()
# Shape: each PGD step restarts from x_adv.detach() and uses grad.detach(), so the perturbed input carries no graph from the previous step; the returned loss is backpropagated in the same iteration and printed with .item()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def mart_loss(model, x_natural, y, optimizer, step_size=0.007, epsilon=0.031,
              perturb_steps=10, beta=6.0, distance="l_inf"):
    kl = nn.KLDivLoss(reduction="none")
    model.eval()
    batch_size = len(x_natural)
    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()
    if distance == "l_inf":
        for _ in range(perturb_steps):
            x_adv.requires_grad_()
            with torch.enable_grad():
                loss_ce = F.cross_entropy(model(x_adv), y)
            grad = torch.autograd.grad(loss_ce, [x_adv])[0]
            x_adv = x_adv.detach() + step_size * torch.sign(grad.detach())
            x_adv = torch.min(torch.max(x_adv, x_natural - epsilon), x_natural + epsilon)
            x_adv = torch.clamp(x_adv, 0.0, 1.0)
    else:
        x_adv = torch.clamp(x_adv, 0.0, 1.0)
    model.train()

    x_adv = torch.clamp(x_adv, 0.0, 1.0).detach()
    optimizer.zero_grad()
    logits = model(x_natural)
    logits_adv = model(x_adv)

    adv_probs = F.softmax(logits_adv, dim=1)
    tmp1 = torch.argsort(adv_probs, dim=1)[:, -2:]
    new_y = torch.where(tmp1[:, -1] == y, tmp1[:, -2], tmp1[:, -1])
    loss_adv = F.cross_entropy(logits_adv, y) + F.nll_loss(torch.log(1.0001 - adv_probs + 1e-12), new_y)

    nat_probs = F.softmax(logits, dim=1)
    true_probs = torch.gather(nat_probs, 1, y.unsqueeze(1).long()).squeeze()
    loss_robust = (1.0 / batch_size) * torch.sum(
        torch.sum(kl(torch.log(adv_probs + 1e-12), nat_probs), dim=1) * (1.0000001 - true_probs))
    return loss_adv + float(beta) * loss_robust


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = mart_loss(model=model, x_natural=data, y=target, optimizer=optimizer,
                         step_size=args.step_size, epsilon=args.epsilon,
                         perturb_steps=args.num_steps, beta=args.beta)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} [{}/{}]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))


def adjust_learning_rate(args, optimizer, epoch):
    lr = args.lr
    if epoch >= 100:
        lr = args.lr * 0.001
    elif epoch >= 90:
        lr = args.lr * 0.01
    elif epoch >= 75:
        lr = args.lr * 0.1
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


def main(args, model, device, train_loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    for epoch in range(1, args.epochs + 1):
        adjust_learning_rate(args, optimizer, epoch)
        train(args, model, device, train_loader, optimizer, epoch)
        torch.save(model.state_dict(), "model-wideres-epoch{}.pt".format(epoch))
