# Source: https://github.com/konpanousis/Adversarial-LWTA-AutoAttack/blob/4e5b36d854973a9d226d2a30d2a5e2a796d38c68/attacks/pgd.py
# Report: Stochastic LWTA adversarial training (official code): madry_loss runs a 10-step PGD inner loop per batch, stepping x_adv with grads from torch.autograd.grad, then returns the CE loss on x_adv for train().
# Shape: each PGD step rebuilds x_adv from x_adv.detach(), so the perturbation carried to the next step has no history; grad comes from autograd.grad without create_graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter("runs/lwta")


def madry_loss(model, x_natural, y, optimizer, step_size=0.007, epsilon=0.031, perturb_steps=10):
    model.eval()
    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()
    for _ in range(perturb_steps):
        x_adv.requires_grad_()
        with torch.enable_grad():
            logits = model(x_adv)
            loss_ce = F.cross_entropy(logits, y)
        grad = torch.autograd.grad(loss_ce, [x_adv])[0]
        x_adv = x_adv.detach() + step_size * torch.sign(grad.detach())
        x_adv = torch.clamp(torch.min(torch.max(x_adv, x_natural - epsilon), x_natural + epsilon), 0.0, 1.0)
    model.train()

    optimizer.zero_grad()
    logits = model(x_adv)
    loss = F.cross_entropy(logits, y)
    return loss, x_adv


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        global_step = int((epoch - 1) * len(train_loader) + batch_idx)

        if args.train_nat:
            loss = F.cross_entropy(model(data), target)
        else:
            loss, x_adv = madry_loss(
                model=model, x_natural=data, y=target, optimizer=optimizer,
                step_size=args.step_size, epsilon=args.epsilon, perturb_steps=args.num_steps,
            )
        loss.backward()

        for name, param in model.named_parameters():
            if "weight" in name and param.grad is not None:
                writer.add_scalar(name, torch.mean(torch.abs(param.grad.clone())), global_step=global_step)
        optimizer.step()

        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} [{}/{}]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))


def main(args, model, train_loader, device):
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=2e-4)
    for epoch in range(1, args.epochs + 1):
        lr = args.lr * (0.5 ** max(0, epoch - 74))
        for group in optimizer.param_groups:
            group["lr"] = lr
        train(args, model, device, train_loader, optimizer, epoch)
        torch.save({"model_state_dict": model.state_dict(), "epoch": epoch}, "ckpt.pt")
