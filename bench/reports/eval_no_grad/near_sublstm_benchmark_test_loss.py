# Source: https://github.com/neuralml/pytorch-subLSTM/blob/177197838bd73099d610df97fd5d7b2e0a004f6f/benchmarks/training.py
# Report: audit: the benchmark's test() switches the wrapper to eval mode and sums criterion(model(inputs), labels) into total_loss as a tensor with no no_grad, so every batch's graph stays alive until the function returns
# Shape: same wrapper and test() still sums the loss as a device tensor, but test() is decorated with @torch.no_grad(), so nothing it accumulates carries a graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class SequenceClassifier(nn.Module):
    """Wraps a recurrent core and reads out the last time step."""

    def __init__(self, rnn, hidden_size, n_classes):
        super().__init__()
        self.rnn = rnn
        self.readout = nn.Linear(hidden_size, n_classes)

    def set_train(self):
        self.train()

    def set_eval(self):
        self.eval()

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.readout(out[:, -1])


def train(model, data_loader, optimizer, criterion, epochs, log_interval, device):
    model.set_train()
    loss_trace = []
    for e in range(epochs):
        running_loss = 0.0
        for i, (inputs, labels) in enumerate(data_loader):
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i % log_interval == log_interval - 1:
                print("\t[%d, %5d] loss: %.3f" % (e + 1, i + 1, running_loss / log_interval))
                loss_trace.append(running_loss / log_interval)
                running_loss = 0.0
    return loss_trace


@torch.no_grad()
def test(model, data_loader, criterion, device):
    total_loss = 0.0
    model.set_eval()
    n_batches = 0
    for inputs, labels in data_loader:
        inputs, labels = inputs.to(device), labels.to(device)
        total_loss += criterion(model(inputs), labels)
        n_batches += 1
    return total_loss / max(n_batches, 1)


def run_benchmark(train_loader, test_loader, input_size=1, hidden_size=128, epochs=5, device="cuda"):
    rnn = nn.LSTM(input_size, hidden_size, batch_first=True)
    model = SequenceClassifier(rnn, hidden_size, n_classes=10).to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    trace = train(model, train_loader, optimizer, criterion, epochs, 200, device)
    test_loss = test(model, test_loader, criterion, device)
    print("test loss: %.4f" % test_loss.item())
    return trace, test_loss.item()
