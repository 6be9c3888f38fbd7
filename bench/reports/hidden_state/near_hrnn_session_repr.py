# Source: https://github.com/cksruf91/recomm-hrnn-pytorch/blob/1e13f0a7365e16d8c0bfd8733a64cee5b65da368/model/hrnn4recom.py
# Report: HRNN session-based recommender keeps the user/session GRU states on self between mini-batches and stores them with .detach()
# Shape: the same per-step state carry, but the states are stored on self with .detach() (as in the audited repository), so each step starts a fresh graph
# Expect: near-miss: must be silent
import torch
from torch import nn
from torch.nn.functional import one_hot


class HRNN(nn.Module):
    def __init__(self, hidden_size, item_size, dropout=0.5, device=None, k=5):
        super().__init__()
        self.k = k
        self.hidden_size = hidden_size
        self.item_size = item_size
        self.device = device
        self.user_gru = nn.GRUCell(hidden_size, hidden_size)
        self.user_dropout = nn.Dropout(dropout)
        self.user_2_session = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.Tanh())
        self.session_gru = nn.GRUCell(item_size, hidden_size)
        self.session_dropout = nn.Dropout(dropout)
        self.output_layer = nn.Sequential(nn.Linear(hidden_size, item_size), nn.Tanh())
        self.user_repr = None
        self.session_repr = None
        self.to(device=device)

    def forward(self, input_item, user_mask, session_mask, user_repr, session_repr):
        item_vec = one_hot(input_item, self.item_size).float()
        user_update = self.user_dropout(self.user_gru(session_repr, user_repr))
        user_repr = user_update * session_mask + user_repr * (1 - session_mask)
        user_repr = user_repr * (1 - user_mask)
        session_init = self.user_2_session(user_repr)
        session_repr = session_init * session_mask + session_repr * (1 - session_mask)
        session_repr = session_repr * (1 - user_mask)
        session_repr = self.session_dropout(self.session_gru(item_vec, session_repr))
        return self.output_layer(session_repr), user_repr, session_repr

    def fit(self, epochs, train_dataloader, loss_func, optimizer, scheduler=None):
        for epoch in range(epochs):
            self.train()
            train_loss = 0.0
            for step, data in enumerate(train_dataloader):
                loss, y, y_hat = self._compute_loss(data, loss_func, optimizer, scheduler)
                train_loss += loss.item()
            print(f"epoch {epoch + 1}: loss {train_loss / max(step + 1, 1):.4f}")

    def _compute_loss(self, data, loss_func, optimizer=None, scheduler=None, train=True):
        input_item, output_item, user_mask, session_mask = data
        if self.user_repr is None:
            self.user_repr = torch.zeros(
                input_item.shape[0], self.hidden_size, device=self.device
            )
        if self.session_repr is None:
            self.session_repr = torch.zeros(
                input_item.shape[0], self.hidden_size, device=self.device
            )

        output, user_repr, session_repr = self.forward(
            input_item, user_mask, session_mask, self.user_repr, self.session_repr
        )
        # keep the GRU states for the next mini-batch of the same sessions
        self.user_repr = user_repr.detach()
        self.session_repr = session_repr.detach()

        loss = loss_func(output, output_item)
        if train:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.parameters(), 1.0)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            self.zero_grad()

        _, indices = torch.topk(output, self.k, dim=-1)
        return loss, output_item.cpu().tolist(), indices.cpu().tolist()
