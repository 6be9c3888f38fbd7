# Source: https://github.com/egillax/deep_LFP/blob/536ec122c08f0696f18ed81eae2f9eb8ee788751/validation.py
# Report: audit of an LFP-signal classifier: val_epoch() calls model.eval() and runs every validation batch through the model with autograd on (no no_grad anywhere), so each step saves activations for a backward that never comes; the visdom meter logger itself unwraps tensors to detached data
# Shape: val_epoch(data_loader, model, criterion, mlog) after model.eval(); loss and outputs go to a MeterLogger whose helpers detach and move to CPU, plus an AverageMeter fed loss.item()
# Expect: TML003 line 59
import torch


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class MeterLogger:
    """Packages loss / accuracy meters and plots them at epoch end."""

    def __init__(self, nclass):
        self.nclass = nclass
        self.loss_sum = {}
        self.loss_n = {}
        self.scores, self.targets = [], []

    def _to_tensor(self, var):
        if torch.is_tensor(var):
            return var.detach().cpu()
        return torch.as_tensor(var)

    def update_loss(self, loss, meter="loss"):
        value = float(self._to_tensor(loss))
        self.loss_sum[meter] = self.loss_sum.get(meter, 0.0) + value
        self.loss_n[meter] = self.loss_n.get(meter, 0) + 1

    def update_meter(self, output, target):
        self.scores.append(self._to_tensor(output))
        self.targets.append(self._to_tensor(target))

    def peek_meter(self):
        scores = torch.cat(self.scores) if self.scores else torch.zeros(0, self.nclass)
        targets = torch.cat(self.targets) if self.targets else torch.zeros(0, dtype=torch.long)
        acc = (scores.argmax(1) == targets).float().mean().item() if len(targets) else 0.0
        means = {k: self.loss_sum[k] / self.loss_n[k] for k in self.loss_sum}
        return {"accuracy": acc, **means}

    def reset_meter(self):
        self.loss_sum, self.loss_n = {}, {}
        self.scores, self.targets = [], []


def val_epoch(data_loader, model, criterion, mlog):
    model.eval()
    losses = AverageMeter()
    for inputs, labels in data_loader:
        labels = labels.cuda(non_blocking=True)
        inputs = inputs.cuda(non_blocking=True)
        outputs = model(inputs)  # expect: TML003
        loss = criterion(outputs, labels)
        mlog.update_loss(loss, meter="loss")
        mlog.update_meter(outputs, labels)
        losses.update(loss.item(), inputs.size(0))
    return losses.avg, mlog


def run(model, criterion, optimizer, train_loader, val_loader, epochs, nclass=4):
    mlog = MeterLogger(nclass)
    for epoch in range(epochs):
        model.train()
        for inputs, labels in train_loader:
            inputs, labels = inputs.cuda(), labels.cuda()
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            mlog.update_loss(loss, meter="train_loss")
        val_loss, mlog = val_epoch(val_loader, model, criterion, mlog)
        print(epoch, val_loss, mlog.peek_meter())
        mlog.reset_meter()
