# Source: https://github.com/fangwei123456/Spike-Element-Wise-ResNet/issues/19
# Report: a detector using SEW-ResNet (spiking neurons) as backbone failed at the second loss.backward() ("backward through the graph a second time", retain_graph=True did not help); the maintainer: call the reset function on the whole network after backward, which fixed it
# Shape: same stateful spiking nodes and training loop, with the maintainer's fix: reset_net(model) after every optimizer step, so each iteration starts from v_reset
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class ATanSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha=2.0):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * ctx.alpha / 2 / (1 + (torch.pi / 2 * ctx.alpha * x) ** 2), None


class IFNode(nn.Module):
    def __init__(self, v_threshold=1.0, v_reset=0.0):
        super().__init__()
        self.v_threshold, self.v_reset = v_threshold, v_reset
        self.v = v_reset

    def forward(self, x):
        h = self.v + x
        spike = ATanSpike.apply(h - self.v_threshold)
        self.v = h * (1.0 - spike) + self.v_reset * spike
        return spike

    def reset(self):
        self.v = self.v_reset


class SEWBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), IFNode())

    def forward(self, x):
        return x + self.conv(x)  # ADD connect


def reset_net(net):
    for m in net.modules():
        if hasattr(m, "reset"):
            m.reset()


def fit_one_epoch(model_train, yolo_loss, optimizer, gen, epoch_step, cuda=True):
    loss = 0
    model_train.train()
    for iteration, batch in enumerate(gen):
        if iteration >= epoch_step:
            break
        images, targets = batch
        if cuda:
            images = images.cuda()
            targets = [t.cuda() for t in targets]
        optimizer.zero_grad()
        outputs = model_train(images)
        loss_value = yolo_loss(outputs, targets)
        loss_value.backward()
        optimizer.step()
        reset_net(model_train)
        loss += loss_value.item()
    return loss / max(epoch_step, 1)
