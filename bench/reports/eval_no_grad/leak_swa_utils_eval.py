# Source: https://github.com/timgaripov/swa/blob/090b95e289ee7a00df2a1949e698177d3f1f8854/utils.py
# Report: audited bug: the SWA reference utils `eval()` calls model.eval() and then runs every test batch through the model with autograd still enabled (no torch.no_grad()), so each batch saves activations for a backward that never comes
# Shape: eval() keeps the original structure (model.eval(), loop over loader, criterion, loss.item()), the forward still runs with grad enabled
# Expect: TML003 line 51
import os

import torch
import tqdm


def adjust_learning_rate(optimizer, lr):
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


def save_checkpoint(dir, epoch, **kwargs):
    state = {"epoch": epoch}
    state.update(kwargs)
    torch.save(state, os.path.join(dir, "checkpoint-%d.pt" % epoch))


def train_epoch(loader, model, criterion, optimizer):
    loss_sum = 0.0
    correct = 0.0
    model.train()
    for input, target in tqdm.tqdm(loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * input.size(0)
        pred = output.data.argmax(1, keepdim=True)
        correct += pred.eq(target.data.view_as(pred)).sum().item()
    return {
        "loss": loss_sum / len(loader.dataset),
        "accuracy": correct / len(loader.dataset) * 100.0,
    }


def eval(loader, model, criterion):
    loss_sum = 0.0
    correct = 0.0
    model.eval()
    for input, target in loader:
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)  # expect: TML003
        loss = criterion(output, target)
        loss_sum += loss.item() * input.size(0)
        pred = output.data.argmax(1, keepdim=True)
        correct += pred.eq(target.data.view_as(pred)).sum().item()
    return {
        "loss": loss_sum / len(loader.dataset),
        "accuracy": correct / len(loader.dataset) * 100.0,
    }


def moving_average(net1, net2, alpha=1):
    for param1, param2 in zip(net1.parameters(), net2.parameters()):
        param1.data *= 1.0 - alpha
        param1.data += param2.data * alpha


def _is_bn(module):
    return issubclass(module.__class__, torch.nn.modules.batchnorm._BatchNorm)


def bn_update(loader, model):
    momenta = {m: m.momentum for m in model.modules() if _is_bn(m)}
    if not momenta:
        return
    model.train()
    for module in momenta:
        module.running_mean = torch.zeros_like(module.running_mean)
        module.running_var = torch.ones_like(module.running_var)
    n = 0
    with torch.no_grad():
        for input, _ in loader:
            input = input.cuda(non_blocking=True)
            b = input.size(0)
            for module in momenta:
                module.momentum = b / (n + b)
            model(input)
            n += b
    for module, momentum in momenta.items():
        module.momentum = momentum
