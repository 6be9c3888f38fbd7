# Source: https://github.com/s-froghyar/thesis-project-mgr/blob/253e6ca474dd2238e39f569a3399345c7feb144e/tpreporter/reporter_utils.py
# Report: get_all_preds (under @torch.no_grad) grows the whole dataset's predictions with all_preds = torch.cat((all_preds, preds)) on every batch, copying the accumulator each step, before the reporter builds confusion matrices
# Shape: a reporter class tracks per-batch loss with .item(), then a no_grad helper re-concatenates the prediction accumulator inside the loader loop
# Expect: TML008 line 21
import numpy as np
import torch
from sklearn.metrics import confusion_matrix
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter


def get_num_correct(preds, labels):
    return preds.argmax(dim=1).eq(labels).sum().item()


@torch.no_grad()
def get_all_preds(model, loader):
    all_preds = torch.tensor([])
    for images, _ in loader:
        preds = model(images)
        all_preds = torch.cat((all_preds, preds), dim=0)  # expect: TML008
    return all_preds


class Reporter:
    """Collects per-batch numbers during training and writes a report at the end."""

    def __init__(self, name, log_dir):
        self.name = name
        self.writer = SummaryWriter(f"{log_dir}/tensorboard")
        self.reset_epoch_data()

    def reset_epoch_data(self):
        self.total_loss = 0.0
        self.total_correct = 0

    def record_batch_data(self, predictions, targets, loss):
        self.total_loss += loss.item()
        self.total_correct += get_num_correct(predictions, targets)

    def record_epoch_data(self, epoch, train_size):
        self.writer.add_scalar("Loss", self.total_loss, epoch)
        self.writer.add_scalar("Accuracy", self.total_correct / train_size, epoch)

    def report_on_model(self, model, test_set, batch_size=256):
        model.eval()
        loader = DataLoader(test_set, batch_size=batch_size, shuffle=False)
        preds = get_all_preds(model, loader)
        targets = np.asarray(test_set.targets)
        cm = confusion_matrix(targets, preds.argmax(dim=1).numpy())
        num_correct = int(np.trace(cm))
        self.writer.add_text("confusion_matrix", np.array2string(cm))
        return num_correct


def train(model, train_set, test_set, reporter, epochs=10, lr=1e-3):
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        reporter.reset_epoch_data()
        for images, targets in loader:
            preds = model(images)
            loss = criterion(preds, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            reporter.record_batch_data(preds, targets, loss)
        reporter.record_epoch_data(epoch, len(train_set))
    return reporter.report_on_model(model, test_set)
