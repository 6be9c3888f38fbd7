# Source: https://github.com/Ferox98/grid-cell-model/blob/ecb1735566f58ded4bfc6a77f3f547bb458f6350/src/models/lstm.py
# Report: audit of the grid-cell LSTM trainer: every window calls loss.backward(retain_graph=True) as its only backward and then adds the loss tensor itself to total_loss, so the epoch-long sum holds every window's retained (never freed) graph until the epoch ends
# Shape: an nn.LSTM wrapper keeps (h, c) as registered buffers; train() walks the random-walk sequence in SEQ_LEN windows, backprops with retain_graph=True, clips and steps, sums `total_loss += loss`, reruns the window to refresh the buffers with detached state, and prints the sum every 10 epochs
# Expect: TML006 line 47; TML001 line 50
import torch
import torch.nn as nn
import torch.optim as optim

SEQ_LEN, HIDDEN, LAYERS, N_WALKS = 32, 128, 2, 64


class WalkLSTM(nn.Module):
    def __init__(self, in_dim, out_dim, hidden=HIDDEN, layers=LAYERS, batch=N_WALKS):
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden, num_layers=layers)
        self.fc = nn.Linear(hidden, out_dim)
        self.register_buffer("last_hidden", torch.zeros(layers, batch, hidden))
        self.register_buffer("cell_state", torch.zeros(layers, batch, hidden))

    def reset_state(self, batch):
        layers, _, hidden = self.last_hidden.shape
        self.last_hidden = self.last_hidden.new_zeros(layers, batch, hidden)
        self.cell_state = self.cell_state.new_zeros(layers, batch, hidden)

    def forward(self, x):
        out, state = self.lstm(x, (self.last_hidden, self.cell_state))
        return self.fc(out), state


def get_window(seq, i):
    return seq[i:i + SEQ_LEN]


def train(model, X_train, y_train, X_test, y_test, epochs=500, lr=0.05, device="cuda"):
    model = model.to(device)
    X_train, y_train = X_train.to(device), y_train.to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=lr)
    scheduler = optim.lr_scheduler.StepLR(optimizer, 10, 0.9)
    for epoch in range(epochs):
        total_loss = 0
        for i in range(0, X_train.size(0) - 1, SEQ_LEN):
            data, targets = get_window(X_train, i), get_window(y_train, i)
            output, (h, c) = model(data)
            loss = loss_fn(output.flatten(0, 1), targets.flatten(0, 1).argmax(-1))
            optimizer.zero_grad()
            loss.backward(retain_graph=True)  # expect: TML006
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            total_loss += loss  # expect: TML001
            output, (h, c) = model(data)
            model.last_hidden = h.detach()
            model.cell_state = c.detach()
        if epoch % 10 == 0:
            with torch.no_grad():
                model.reset_state(X_test.size(1))
                out, _ = model(X_test.to(device))
                hits = (out[-1].argmax(-1) == y_test[-1].to(device).argmax(-1)).float().mean().item()
            print(f"epoch {epoch:3d} | lr {scheduler.get_last_lr()} | loss {float(total_loss):.2f} | val acc {hits:.3f}")
        model.reset_state(X_train.size(1))
        scheduler.step()
    return model
