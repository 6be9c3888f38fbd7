# Source: https://github.com/GT-RIPL/Continual-Learning-Benchmark/blob/5d82449a8bddc839117e07d080e1a8f786d55253/agents/default.py
# Report: audit of NormalNN: learn_batch() feeds the loss returned by update_model() to an AverageMeter (sum += val * n) kept for the whole epoch, which is safe only because update_model() returns loss.detach(); predict() runs the model after model.eval() with no no_grad. This is the variant the repo avoided (attached loss returned) plus the repo's predict()
# Shape: continual-learning agent with multi-head dict outputs; the meter's update() body keeps a running tensor sum, so the attached loss chains every step's graph for the epoch
# Expect: TML001 line 77; TML003 line 58
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(logits, target):
    return (logits.argmax(dim=1) == target).float().mean().item() * 100.0


def accumulate_acc(output, target, task, meter):
    for t, t_out in output.items():
        inds = [i for i in range(len(task)) if task[i] == t]
        if inds:
            meter.update(accuracy(t_out[inds], target[inds]), len(inds))
    return meter


class NormalNN(nn.Module):
    def __init__(self, model, config):
        super().__init__()
        self.model = model.cuda()
        self.config = config
        self.criterion_fn = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=config["lr"], momentum=0.9)

    def criterion(self, preds, targets, tasks):
        loss = 0
        for t, t_preds in preds.items():
            inds = [i for i in range(len(tasks)) if tasks[i] == t]
            if inds:
                loss += self.criterion_fn(t_preds[inds], targets[inds]) * len(inds)
        return loss / len(targets)

    def update_model(self, inputs, targets, tasks):
        out = self.model(inputs)
        loss = self.criterion(out, targets, tasks)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, out

    def predict(self, inputs):
        self.model.eval()
        out = self.model(inputs)  # expect: TML003
        return {t: o.detach() for t, o in out.items()}

    def validation(self, loader):
        acc = AverageMeter()
        for inputs, target, task in loader:
            output = self.predict(inputs.cuda())
            acc = accumulate_acc(output, target.cuda(), task, acc)
        self.model.train()
        return acc.avg

    def learn_batch(self, train_loader, val_loader=None):
        for epoch in range(self.config["epochs"]):
            losses, acc = AverageMeter(), AverageMeter()
            self.model.train()
            for i, (inputs, target, task) in enumerate(train_loader):
                inputs, target = inputs.cuda(), target.cuda()
                loss, output = self.update_model(inputs, target, task)
                acc = accumulate_acc(output, target, task, acc)
                losses.update(loss, inputs.size(0))  # expect: TML001
                if i % self.config["print_freq"] == 0:
                    print(f"[{epoch}][{i}/{len(train_loader)}] loss {losses.val:.3f} ({losses.avg:.3f}) acc {acc.avg:.2f}")
            if val_loader is not None:
                self.validation(val_loader)
