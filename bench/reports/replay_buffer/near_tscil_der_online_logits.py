# Source: https://github.com/zqiao11/TSCIL/blob/1e7dec246200d905e17a5b87c6bd0527cca47ea0/agents/der.py
# Report: Same DER agent with the fix: the logits stored for replay are detached and the epoch loss is accumulated as a Python float.
# Shape: outputs.detach() goes into the reservoir buffer (no graph in the persistent tensor), and epoch_loss += loss.item() keeps only a number.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReservoirBuffer(nn.Module):
    def __init__(self, mem_size, input_shape, n_classes, device):
        super().__init__()
        self.current_index = 0
        self.n_seen_so_far = 0
        self.register_buffer("buffer_input", torch.zeros(mem_size, *input_shape, device=device))
        self.register_buffer("buffer_label", torch.zeros(mem_size, dtype=torch.long, device=device))
        self.register_buffer("buffer_logits", torch.zeros(mem_size, n_classes, device=device))

    def update(self, x, y, logits=None):
        room = max(0, self.buffer_input.size(0) - self.current_index)
        if room:
            k = min(room, x.size(0))
            end = self.current_index + k
            self.buffer_input[self.current_index:end].data.copy_(x[:k])
            self.buffer_label[self.current_index:end].data.copy_(y[:k])
            if logits is not None:
                self.buffer_logits[self.current_index:end].data.copy_(logits[:k])
            self.current_index = end
            self.n_seen_so_far += k
            if k == x.size(0):
                return
            x, y = x[room:], y[room:]
            logits = logits[room:] if logits is not None else None
        draws = torch.empty(x.size(0), device=x.device).uniform_(0, self.n_seen_so_far).long()
        self.n_seen_so_far += x.size(0)
        src = (draws < self.buffer_input.size(0)).nonzero().squeeze(-1)
        if src.numel() == 0:
            return
        dst = draws[src]
        self.buffer_input[dst] = x[src]
        self.buffer_label[dst] = y[src]
        if logits is not None:
            self.buffer_logits[dst] = logits[src]

    def retrieve(self, n):
        filled = min(self.current_index, self.buffer_input.size(0))
        idx = torch.randint(0, filled, (n,), device=self.buffer_input.device)
        return self.buffer_input[idx], self.buffer_label[idx], self.buffer_logits[idx]


class DERAgent:
    def __init__(self, model, n_classes, input_shape, device, mem_size=500, der_plus=True):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()
        self.buffer = ReservoirBuffer(mem_size, input_shape, n_classes, device)
        self.der_plus = der_plus
        self.task_now = 0

    def train_epoch(self, loader):
        epoch_loss, correct, total = 0, 0, 0
        self.model.train()
        for batch_id, (x, y) in enumerate(loader):
            x, y = x.to(self.device), y.to(self.device)
            total += y.size(0)
            self.optimizer.zero_grad()
            loss = 0
            if self.task_now > 0:
                x_buf, y_buf, logits_buf = self.buffer.retrieve(x.size(0))
                out_buf = self.model(x_buf)
                loss += 0.5 * F.mse_loss(out_buf, logits_buf[:, :out_buf.size(1)])
                if self.der_plus:
                    loss += 0.5 * self.criterion(out_buf, y_buf)
            outputs = self.model(x)
            loss += self.criterion(outputs, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1)
            self.optimizer.step()
            self.buffer.update(x, y, logits=outputs.detach())
            epoch_loss += loss.item()
            correct += outputs.argmax(dim=1).eq(y).sum().item()
        return epoch_loss / (batch_id + 1), 100.0 * correct / total
