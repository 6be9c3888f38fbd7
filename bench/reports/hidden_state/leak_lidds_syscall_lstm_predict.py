# Source: https://github.com/LID-DS/LID-DS/blob/01113a06f717daac16bf799503381ae60b47a528/algorithms/decision_engines/lstm.py
# Report: audited code: fit() detaches the carried (h, c) after every batch ("detach hidden otherwise overflow????"), but predict(), called once per system call of a recording, feeds self._hidden back with neither detach nor no_grad (source note: PR https://github.com/LID-DS/LID-DS/pull/217: keep hidden/cell state across batches until a new recording)
# Shape: the LSTM state lives on the decision engine (self._hidden) and is rebuilt from itself at every predict() call; only new_recording() cuts the chain
# Expect: TML005 line 65; TML003 line 65
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self, num_classes, input_size, hidden_size, num_layers):
        super().__init__()
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(input_size=input_size, hidden_size=hidden_size,
                            num_layers=num_layers, batch_first=True)
        self.output = nn.Linear(hidden_size, num_classes)

    def forward(self, x, hidden):
        if hidden is None or x.size(0) != hidden[0].size(1):
            output, hidden = self.lstm(x)
        else:
            output, hidden = self.lstm(x, hidden)
        out = torch.tanh(hidden[0].view(-1, self.hidden_size))
        return self.output(out), hidden


class LSTMDecisionEngine:
    def __init__(self, distinct_syscalls, input_dim, epochs=300, hidden_dim=64):
        self._device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self._lstm = Net(distinct_syscalls + 1, input_dim, hidden_dim, 1).to(self._device)
        self._epochs = epochs
        self._hidden = None

    def fit(self, train_dataset, val_dataset, batch_indices, batch_indices_val):
        train_dataloader = DataLoader(train_dataset, batch_sampler=batch_indices)
        val_dataloader = DataLoader(val_dataset, batch_sampler=batch_indices_val)
        criterion = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(self._lstm.parameters(), lr=0.001)
        for epoch in range(self._epochs):
            self._hidden = None
            for inputs, labels in train_dataloader:
                outputs, hidden = self._lstm(inputs, self._hidden)
                self._hidden = tuple(state.detach() for state in hidden)
                optimizer.zero_grad()
                train_loss = criterion(outputs, labels)
                train_loss.backward()
                optimizer.step()
            self.new_recording()
            val_loss = 0.0
            with torch.no_grad():
                for inputs, labels in val_dataloader:
                    outputs, self._hidden = self._lstm(inputs, self._hidden)
                    val_loss += criterion(outputs, labels).item() * inputs.size(0)
            print("Epoch: %d, loss: %1.5f, val_loss: %1.5f" % (epoch, train_loss.item(), val_loss))
            self.new_recording()

    def new_recording(self):
        self._hidden = None

    def predict(self, feature_list):
        x = torch.tensor(np.array([feature_list[1:]]), dtype=torch.float32)
        x = x.reshape(x.shape[0], 1, x.shape[1]).to(self._device)
        actual_syscall = feature_list[0]
        prediction_logits, self._hidden = self._lstm(x, self._hidden)  # expect: TML005, TML003
        predicted_prob = float(torch.softmax(prediction_logits[0], dim=0)[actual_syscall])
        return 1 - predicted_prob


def detect(de, recordings, feature_extractor):
    scores = []
    for recording in recordings:
        for syscall in recording.syscalls():
            scores.append(de.predict(feature_extractor(syscall)))
        de.new_recording()
    return max(scores)
