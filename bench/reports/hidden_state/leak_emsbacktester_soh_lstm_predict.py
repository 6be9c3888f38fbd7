# Source: https://github.com/lingling36109/EMSBackTester/blob/19370d0f21b865d3578d44daf7241389679d1951/SOH/helper.py
# Report: audited evaluation code: the battery state-of-health LSTM validates autoregressively: tester() calls init_hidden() (zeros with requires_grad_()) and then predict() per batch, which feeds self.hidden/self.control into the LSTM and stores the new (hn, cn) back on the model; the repository runs that loop under torch.no_grad() (source also: model: https://github.com/lingling36109/EMSBackTester/blob/145b3844b3f35d7918468bfe2d066325913f92d2/SOH/LSTM.py)
# Shape: tester() without the no_grad block: the carried (hn, cn) stay graph-attached, so each validation batch's LSTM graph links to the previous one through self.hidden/self.control and the chain grows over the whole validation set
# Expect: TML005 line 31; TML005 line 32; TML003 line 63
import torch
from torch import nn


class LSTM(nn.Module):
    def __init__(self, num_features, hidden_units=16, num_layers=1, dropout=0.1):
        super().__init__()
        self.hidden = None
        self.control = None
        self.hidden_units = hidden_units
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size=num_features, hidden_size=hidden_units, batch_first=True,
                            num_layers=num_layers, dropout=dropout)
        self.linear = nn.Linear(in_features=hidden_units, out_features=1)
        self.relu = nn.ReLU()

    def forward(self, inputX):
        batch_size = inputX.shape[0]
        h0 = torch.zeros(self.num_layers, batch_size, self.hidden_units).requires_grad_()
        c0 = torch.zeros(self.num_layers, batch_size, self.hidden_units).requires_grad_()
        _, (hn, _) = self.lstm(inputX, (h0, c0))
        return self.relu(self.linear(hn[-1]).flatten())

    def predict(self, inputX):
        _, (hn, cn) = self.lstm(inputX, (self.hidden, self.control))
        out = self.relu(self.linear(hn[-1]).flatten())
        self.hidden = hn  # expect: TML005
        self.control = cn  # expect: TML005
        return out

    def init_hidden(self, batch_size):
        self.hidden = torch.zeros(self.num_layers, batch_size, self.hidden_units).requires_grad_()
        self.control = torch.zeros(self.num_layers, batch_size, self.hidden_units).requires_grad_()


def trainer(train_data, valid_data, model, csvFile, batch_size, lr=0.001):
    loss_function = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    with open(csvFile, "w") as f:
        for ix_epoch in range(100):
            total_loss = 0
            for X, y in train_data:
                output = model.forward(X)
                loss = loss_function(output, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total_loss += loss.item()
            valid_loss = tester(valid_data, model, batch_size)
            f.write(str(total_loss / len(train_data)) + ",")
            print(f"Epoch {ix_epoch}: valid loss {valid_loss}")


def tester(data_loader, model, batch_size):
    loss_function = nn.MSELoss()
    total_loss = 0
    model.init_hidden(batch_size=batch_size)
    for X, y in data_loader:
        output = model.predict(X)  # expect: TML003
        loss = loss_function(output, y)
        total_loss += loss.item()
    avg_loss = total_loss / len(data_loader)
    print(f"Test loss: {avg_loss}")
    return avg_loss
