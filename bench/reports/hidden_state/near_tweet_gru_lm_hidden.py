# Source: https://github.com/ChaseDuncan/trumpcats/blob/d0590e17e8f42acdbfbe5f6c21cdd7f40728d0ae/main.py
# Report: GRU language model on tweets trained with torchtext BPTT batches ("copied from pytorch/examples word_language_model"); train() builds a fresh zero hidden state for every batch
# Shape: hidden is re-created by model.init_hidden() at the top of each iteration, so `output, hidden = model(text, hidden)` never feeds one batch's graph into the next; nothing graph-attached outlives the batch
# Expect: near-miss: must be silent
import torch
import torch.nn as nn

epochs = 100
batch_size = 64
bptt_len = 35
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class LanguageModel(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, nlayers=1, dropout=0.5):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.nlayers = nlayers
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab_size, embedding_dim)
        self.rnn = nn.GRU(embedding_dim, hidden_dim, nlayers, dropout=dropout)
        self.decoder = nn.Linear(hidden_dim, vocab_size)

    def init_hidden(self, batch_size):
        return torch.zeros(self.nlayers, batch_size, self.hidden_dim)

    def forward(self, data, hidden):
        emb = self.drop(self.encoder(data))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden


def train(model, bptt_it, criterion, optimizer, ntokens):
    model.train()
    total_loss = 0.0
    for i, batch in enumerate(bptt_it):
        model.zero_grad()
        text, targets = batch.text.to(device), batch.target.to(device)

        hidden = model.init_hidden(text.size(1))
        hidden = hidden.to(device)
        output, hidden = model(text, hidden)

        # flatten (seq_len, batch, vocab) -> (seq_len * batch, vocab) for cross entropy
        loss = criterion(output.view(-1, ntokens), targets.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()

        total_loss += loss.item()
        if i % 200 == 0 and i > 0:
            print(f"batch {i} loss {total_loss / 200:.3f}")
            total_loss = 0.0


def main(bptt_it, ntokens, weight_matrix):
    model = LanguageModel(200, 200, ntokens, 2, 0.5)
    model.encoder.weight.data.copy_(weight_matrix)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        print("Training epoch: {}".format(epoch))
        train(model, bptt_it, criterion, optimizer, ntokens)
        torch.save({"epoch": epoch,
                    "model_state_dict": model.state_dict(),
                    "optimizer_state_dict": optimizer.state_dict()}, "checkpoints/model.pt")
