# Source: https://github.com/mzampar/Deep-Learning-Project/blob/main/train/train.py
# Report: ConvLSTM precipitation-nowcasting script (curriculum over sequence lengths) deletes the batch tensors and calls torch.cuda.empty_cache() after every training batch
# Shape: empty_cache inside the per-batch training loop frees no live tensor (they are already unreferenced after del); it only returns cached blocks, so every next forward pays cudaMalloc again and each call synchronizes
# Expect: TML009 line 74
import time

import torch as th
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RainSequenceDataset(Dataset):
    def __init__(self, frames, seq_len):
        self.frames = frames
        self.seq_len = seq_len

    def __len__(self):
        return max(0, self.frames.shape[0] - 2 * self.seq_len)

    def __getitem__(self, i):
        x = self.frames[i:i + self.seq_len]
        y = self.frames[i + self.seq_len:i + 2 * self.seq_len]
        return x, y


class TinyConvLSTM(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = hidden
        self.gates = nn.Conv2d(1 + hidden, 4 * hidden, 3, padding=1)
        self.head = nn.Conv2d(hidden, 1, 1)

    def forward(self, frames, mask_true=None, schedule_sampling=False):
        b, t, c, hgt, wid = frames.shape
        h = frames.new_zeros(b, self.hidden, hgt, wid)
        cell = th.zeros_like(h)
        outs = []
        for k in range(t):
            i, f, o, g = self.gates(th.cat([frames[:, k], h], 1)).chunk(4, 1)
            cell = th.sigmoid(f) * cell + th.sigmoid(i) * th.tanh(g)
            h = th.sigmoid(o) * th.tanh(cell)
            outs.append(th.sigmoid(self.head(h)))
        return th.stack(outs, 1)


def train(frames, num_epochs=1, batch_size=64, initial_lr=0.01, max_seq_len=9):
    device = th.device("cuda" if th.cuda.is_available() else "cpu")
    model = TinyConvLSTM().to(device)
    criterion = nn.MSELoss()
    optimizer = th.optim.Adam(model.parameters(), lr=initial_lr)
    start_time = time.time()

    for seq_len in range(2, max_seq_len + 1):
        print(f"Training with sequence length {seq_len}.")
        dataloader = DataLoader(RainSequenceDataset(frames, seq_len), batch_size=batch_size, shuffle=True)
        val_loader = DataLoader(RainSequenceDataset(frames[-500:], seq_len), batch_size=batch_size)

        for epoch in range(num_epochs):
            model.train()
            running_loss = 0.0
            for batch_idx, (inputs, targets) in enumerate(dataloader):
                inputs, targets = inputs.to(device), targets.to(device)
                optimizer.zero_grad()
                outputs = model(inputs, mask_true=None, schedule_sampling=False)
                loss = criterion(outputs, targets)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()

                if batch_idx % 10 == 0:
                    print(f"Epoch [{epoch + 1}/{num_epochs}], Batch [{batch_idx + 1}], Loss: {loss.item():.6f}")

                del outputs, loss, inputs, targets
                th.cuda.empty_cache()  # expect: TML009

            print(f"Seq_Len {seq_len} epoch {epoch + 1}: train {running_loss / len(dataloader):.4f}")

            model.eval()
            validation_loss = 0.0
            with th.no_grad():
                for inputs, targets in val_loader:
                    inputs, targets = inputs.to(device), targets.to(device)
                    outputs = model(inputs, th.ones_like(inputs), schedule_sampling=False)
                    validation_loss += criterion(outputs, targets).item()
            print(f"validation {validation_loss / len(val_loader):.4f}, "
                  f"{(time.time() - start_time) / 60:.2f} min")
    return model
