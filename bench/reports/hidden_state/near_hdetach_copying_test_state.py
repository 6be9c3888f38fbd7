# Source: https://github.com/bhargav104/h-detach/blob/5f948772da85c927e863d09621b5b20ed7fab605/copying.py
# Report: h-detach (ICLR 2019) copying task: training unrolls an LSTM over T+20 steps with stochastic h.detach(); the test pass carries (h, c) over the same steps inside torch.no_grad().
# Shape: test_model carries (h, c) under no_grad and reduces with .item(); in training (h, c) are re-created per batch, carried only within one sequence and backpropagated once after it (intended BPTT).
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cuda")
T = 300
hid_size = 128
test_size = 5000


class LSTMCellNet(nn.Module):
    def __init__(self, inp_size, hid_size, out_size):
        super().__init__()
        self.cell = nn.LSTMCell(inp_size, hid_size)
        self.fc1 = nn.Linear(hid_size, out_size)

    def forward(self, x, state):
        h, c = self.cell(x, state)
        return self.fc1(h), (h, c)


def test_model(model, test_x, test_y, criterion):
    loss = 0
    accuracy = 0
    inp_x = torch.transpose(test_x, 0, 1)
    inp_y = torch.transpose(test_y, 0, 1)
    h = torch.zeros(test_size, hid_size).to(device)
    c = torch.zeros(test_size, hid_size).to(device)
    with torch.no_grad():
        for i in range(T + 20):
            output, (h, c) = model(inp_x[i], (h, c))
            loss += criterion(output, inp_y[i].squeeze(1)).item()
            if i >= T + 10:
                preds = torch.argmax(output, dim=1)
                accuracy += (preds == inp_y[i].squeeze(1)).sum().item()
    return loss / (T + 20.0), accuracy / 500.0


def train_model(model, train_x, train_y, test_x, test_y, epochs, batch_size, p_detach, clip=1.0):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    best_acc = 0
    for epoch in range(epochs):
        for z in range(train_x.size(0) // batch_size):
            ind = np.random.choice(train_x.size(0), batch_size)
            inp_x = train_x[ind].transpose(0, 1)
            inp_y = train_y[ind].transpose(0, 1)
            h = torch.zeros(batch_size, hid_size).to(device)
            c = torch.zeros(batch_size, hid_size).to(device)

            loss = 0
            for i in range(T + 20):
                if p_detach > 0 and np.random.random() <= p_detach:
                    h = h.detach()
                output, (h, c) = model(inp_x[i], (h, c))
                loss += criterion(output, inp_y[i].squeeze(1))
            loss /= T + 20.0

            model.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()

        val_loss, accuracy = test_model(model, test_x, test_y, criterion)
        if accuracy >= best_acc:
            best_acc = accuracy
            torch.save({"net": model.state_dict(), "hid_size": hid_size}, "best_model.pt")
        print("epoch {} val loss {:.4f} acc {:.3f}".format(epoch + 1, val_loss, accuracy))


if __name__ == "__main__":
    net = LSTMCellNet(1, hid_size, 9).to(device)
    xs = torch.randint(0, 9, (20000, T + 20, 1)).float().to(device)
    ys = torch.randint(0, 9, (20000, T + 20, 1)).to(device)
    train_model(net, xs[:15000], ys[:15000], xs[15000:], ys[15000:], epochs=10, batch_size=100, p_detach=0.25)
