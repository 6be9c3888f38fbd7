# Source: https://github.com/JulesBelveze/text-summarizer/commit/a382761a21e9742e8d7c2f4fa724e8cfd4ccfdb9
# Report: Seq2seq summarizer after its memory fixes (commit a382761 and the later "Gpu training" train.py): batch losses are reduced with .item() and evaluation runs under torch.no_grad().
# Shape: epoch_loss_train/epoch_loss_eval only ever receive Python floats, the eval forward is grad-disabled, and train() appends floats, so no graph outlives a batch.
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
voc_size, embedding_dim, hidden_dim = 50000, 128, 256


class Seq2seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_emb = nn.Embedding(voc_size, embedding_dim)
        self.encoder = nn.LSTM(embedding_dim, hidden_dim, batch_first=True)
        self.dec_emb = nn.Embedding(voc_size, embedding_dim)
        self.decoder = nn.LSTM(embedding_dim, hidden_dim, batch_first=True)
        self.fc = nn.Linear(hidden_dim, voc_size)

    def forward(self, story, highlight):
        _, enc_hidden = self.encoder(self.enc_emb(story))
        dec_out, _ = self.decoder(self.dec_emb(highlight), enc_hidden)
        return torch.log_softmax(self.fc(dec_out), dim=2)


def train_epoch(train_iter, test_iter, criterion, model, optimizer):
    epoch_loss_train, epoch_loss_eval = 0, 0

    model.train()
    for i, (story, highlight) in enumerate(train_iter):
        optimizer.zero_grad()
        story, highlight = story.to(device), highlight.to(device)
        output = model(story, highlight)
        batch_loss_train = criterion(output.reshape(-1, voc_size), highlight.reshape(-1))
        batch_loss_train.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5)
        epoch_loss_train += batch_loss_train.item()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        for i, (story, highlight) in enumerate(test_iter):
            story, highlight = story.to(device), highlight.to(device)
            output = model(story, highlight)
            batch_loss_eval = criterion(output.reshape(-1, voc_size), highlight.reshape(-1)).item()
            epoch_loss_eval += batch_loss_eval

    return epoch_loss_train / len(train_iter), epoch_loss_eval / len(test_iter)


def train(train_iter, test_iter, criterion, model, optimizer, num_epochs=100):
    train_loss, eval_loss = [], []
    model.to(device)
    for epoch in range(num_epochs):
        start = time.time()
        epoch_loss_train, epoch_loss_eval = train_epoch(train_iter, test_iter, criterion, model, optimizer)
        train_loss.append(epoch_loss_train)
        eval_loss.append(epoch_loss_eval)
        print("Epoch: {} | loss train: {} | loss eval: {} | time: {}".format(
            epoch, epoch_loss_train, epoch_loss_eval, time.time() - start))
    return train_loss


if __name__ == "__main__":
    model = Seq2seq()
    train([], [], nn.NLLLoss(), model, torch.optim.Adam(model.parameters(), lr=1e-3))
