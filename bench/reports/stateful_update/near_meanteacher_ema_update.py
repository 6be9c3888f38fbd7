# Source: https://github.com/CuriousAI/mean-teacher/blob/516ce35208a9e713726d3f8096711d4177765929/pytorch/main.py
# Report: Mean Teacher (PyTorch port): the EMA teacher's parameters are detach_()ed at creation and update_ema_variables blends the student into them after every optimizer step
# Shape: the update works on ema_param.data and param.data, outside autograd, so the teacher weights stay leaves with no history; the teacher logits are detached before the consistency loss
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F

NO_LABEL = -1


def create_model(arch, num_classes, ema=False):
    model = nn.DataParallel(arch(num_classes=num_classes)).cuda()
    if ema:
        for param in model.parameters():
            param.detach_()
    return model


def update_ema_variables(model, ema_model, alpha, global_step):
    # use the true average until the exponential average is more correct
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def softmax_mse_loss(input_logits, target_logits):
    input_softmax = F.softmax(input_logits, dim=1)
    target_softmax = F.softmax(target_logits, dim=1)
    return F.mse_loss(input_softmax, target_softmax, reduction="sum") / input_logits.size(1)


def train(train_loader, model, ema_model, optimizer, epoch, global_step, args):
    class_criterion = nn.CrossEntropyLoss(reduction="sum", ignore_index=NO_LABEL).cuda()
    model.train()
    ema_model.train()
    running = {"class_loss": 0.0, "cons_loss": 0.0}
    for i, ((input, ema_input), target) in enumerate(train_loader):
        input, ema_input = input.cuda(), ema_input.cuda()
        target = target.cuda(non_blocking=True)
        minibatch_size = len(target)

        ema_logit = ema_model(ema_input)
        class_logit = model(input)
        ema_logit = ema_logit.detach()

        class_loss = class_criterion(class_logit, target) / minibatch_size
        consistency_weight = args.consistency * min(1.0, epoch / args.consistency_rampup)
        consistency_loss = consistency_weight * softmax_mse_loss(class_logit, ema_logit) / minibatch_size
        loss = class_loss + consistency_loss
        running["class_loss"] += class_loss.item()
        running["cons_loss"] += consistency_loss.item()

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        global_step += 1
        update_ema_variables(model, ema_model, args.ema_decay, global_step)

    return {k: v / len(train_loader) for k, v in running.items()}, global_step
