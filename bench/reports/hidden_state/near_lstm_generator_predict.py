# Source: https://github.com/AndreyKondakovGW/LSTM_Generator_Test/blob/main/src/predict.py
# Report: the repository's text-generation helper with the fix applied: the priming pass and the sampling loop run under torch.no_grad()
# Shape: (h, c) is still fed back every step, but no step records a graph, so the carried state is a plain tensor; the training loop starts a fresh hidden state per batch and keeps loss.item()
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class TextRNN(nn.Module):
    def __init__(self, input_size, hidden_size, embedding_size, n_layers=1):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.encoder = nn.Embedding(input_size, embedding_size)
        self.lstm = nn.LSTM(embedding_size, hidden_size, n_layers)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(hidden_size, input_size)

    def forward(self, x, hidden):
        x = self.encoder(x).squeeze(2)
        out, (ht1, ct1) = self.lstm(x, hidden)
        out = self.dropout(out)
        x = self.fc(out)
        return x, (ht1, ct1)

    def init_hidden(self, device, batch_size=1):
        return (torch.zeros(self.n_layers, batch_size, self.hidden_size, requires_grad=True).to(device),
                torch.zeros(self.n_layers, batch_size, self.hidden_size, requires_grad=True).to(device))


def predict(model, char_to_idx, idx_to_char, device, start_text=" ", prediction_len=200, temp=0.3):
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(device=device)
        idx_input = [char_to_idx[char] for char in start_text]
        train = torch.LongTensor(idx_input).view(-1, 1, 1).to(device)
        predicted_text = start_text

        _, hidden = model(train, hidden)

        inp = train[-1].view(-1, 1, 1)

        for i in range(prediction_len):
            output, hidden = model(inp.to(device), hidden)
            output_logits = output.cpu().data.view(-1)
            p_next = F.softmax(output_logits / temp, dim=-1).detach().cpu().data.numpy()
            top_index = np.random.choice(len(char_to_idx), p=p_next)
            inp = torch.LongTensor([top_index]).view(-1, 1, 1).to(device)
            predicted_text += idx_to_char[top_index]
    return predicted_text


def training_loop(model, loader, num_epochs, optimizer, scheduler, criterion, device):
    loss_avg = []
    for epoch in range(num_epochs):
        model.train()
        train, target = loader.get_batch()
        train = train.permute(1, 0, 2).to(device)
        target = target.permute(1, 0, 2).to(device)
        hidden = model.init_hidden(batch_size=loader.batch_size, device=device)

        output, hidden = model(train, hidden)
        loss = criterion(output.permute(1, 2, 0), target.squeeze(-1).permute(1, 0))

        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        loss_avg.append(loss.item())
        if len(loss_avg) >= 50:
            mean_loss = np.mean(loss_avg)
            print(f"Loss: {mean_loss}")
            scheduler.step(mean_loss)
            loss_avg = []
