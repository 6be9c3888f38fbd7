# Source: https://github.com/clovaai/deep-text-recognition-benchmark/blob/1c6efa5218b27b4b86af7816676e0a26eb3565c2/train.py
# Report: scene-text recognition trainer feeds each step's CTC/attention cost to an Averager whose add() reads v.data; validation() is run by the caller inside torch.no_grad()
# Shape: Averager.add keeps v.data.sum() (detached) in self.sum, so the per-step graph dies; the validation loop's forwards run under the caller's no_grad
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F


class Averager:
    """Running mean of a loss tensor."""

    def __init__(self):
        self.reset()

    def add(self, v):
        count = v.data.numel()
        v = v.data.sum()
        self.n_count += count
        self.sum += v

    def reset(self):
        self.n_count = 0
        self.sum = 0

    def val(self):
        return self.sum / float(self.n_count) if self.n_count else 0


def validation(model, criterion, loader, converter, opt, device):
    n_correct, seen = 0, 0
    valid_loss_avg = Averager()
    for images, labels in loader:
        bs = images.size(0)
        seen += bs
        image = images.to(device)
        text_for_loss, length_for_loss = converter.encode(labels, opt.batch_max_length)
        text_for_pred = torch.zeros(bs, opt.batch_max_length + 1, dtype=torch.long, device=device)
        preds = model(image, text_for_pred)
        preds_size = torch.IntTensor([preds.size(1)] * bs)
        cost = criterion(preds.log_softmax(2).permute(1, 0, 2), text_for_loss, preds_size, length_for_loss)
        valid_loss_avg.add(cost)
        _, preds_index = preds.max(2)
        for gt, pred in zip(labels, converter.decode(preds_index.data, preds_size.data)):
            n_correct += int(pred == gt)
    return valid_loss_avg.val(), n_correct / float(seen) * 100


def train(model, criterion, optimizer, train_dataset, valid_loader, converter, opt, device):
    loss_avg = Averager()
    start = time.time()
    best_accuracy = -1
    i = 0
    while True:
        images, labels = train_dataset.get_batch()
        image = images.to(device)
        text, length = converter.encode(labels, opt.batch_max_length)
        bs = image.size(0)
        preds = model(image, text).log_softmax(2)
        preds_size = torch.IntTensor([preds.size(1)] * bs).to(device)
        cost = criterion(preds.permute(1, 0, 2), text, preds_size, length)

        model.zero_grad()
        cost.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), opt.grad_clip)
        optimizer.step()

        loss_avg.add(cost)

        if i % opt.valInterval == 0:
            print(f"[{i}/{opt.num_iter}] loss {loss_avg.val():0.5f} {time.time() - start:0.1f}s")
            loss_avg.reset()
            model.eval()
            with torch.no_grad():
                valid_loss, acc = validation(model, criterion, valid_loader, converter, opt, device)
            model.train()
            if acc > best_accuracy:
                best_accuracy = acc
                torch.save(model.state_dict(), f"./saved_models/{opt.experiment_name}/best_accuracy.pth")
        if i == opt.num_iter:
            break
        i += 1
