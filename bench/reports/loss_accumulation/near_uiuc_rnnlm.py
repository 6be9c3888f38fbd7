# Source: https://github.com/2020-Fall-UIUC-LING506/hw5/blob/main/rnn.py
# Report: course assignment starter (RNN LM, one sentence at a time): sums word losses into sentence_loss, backprops it, and adds sentence_loss.data.item() to the epoch total.
# Shape: sentence_loss (and the GRU hidden state) are re-created for every sentence and backpropagated inside that iteration; the epoch total only receives a Python float.
# Expect: near-miss: must be silent
import torch


class Vocabulary:
    def __init__(self):
        self.word2index = {"<s>": 0, "</s>": 1}
        self.n_words = 2

    def get_index(self, word):
        if word not in self.word2index:
            self.word2index[word] = self.n_words
            self.n_words += 1
        return self.word2index[word]


class RNN(torch.nn.Module):
    def __init__(self, vocab, hidden_size):
        super().__init__()
        self.vocab = vocab
        self.hidden_size = hidden_size
        self.embedding = torch.nn.Embedding(vocab.n_words, hidden_size)
        self.gru = torch.nn.GRU(hidden_size, hidden_size)
        self.out = torch.nn.Linear(hidden_size, vocab.n_words)
        self.softmax = torch.nn.LogSoftmax(dim=1)

    def forward(self, token, hidden):
        embedded = self.embedding(torch.tensor([[token]])).view(1, 1, -1)
        output, hidden = self.gru(embedded, hidden)
        return self.softmax(self.out(output[0])), hidden

    def init_hidden(self):
        return torch.zeros(1, 1, self.hidden_size)

    def train_epoch(self, numbered_corpus, optimizer, criterion):
        """One optimizer step per sentence; returns the corpus loss for the epoch."""
        total_loss = 0.0
        for sentence in numbered_corpus:
            optimizer.zero_grad()
            sentence_loss = 0
            hidden = self.init_hidden()
            for i in range(len(sentence) - 1):
                output, hidden = self.forward(sentence[i], hidden)
                word_loss = criterion(output, torch.tensor([sentence[i + 1]]))
                sentence_loss += word_loss
            total_loss += sentence_loss.data.item()
            sentence_loss.backward()
            optimizer.step()
        return total_loss


def train_lm(corpus_lines, hidden_size=256, lr=0.01, epochs=100):
    vocab = Vocabulary()
    numbered = [[vocab.get_index(w) for w in line.split(" ")] for line in corpus_lines]
    criterion = torch.nn.NLLLoss()
    rnn = RNN(vocab, hidden_size)
    optimizer = torch.optim.SGD(rnn.parameters(), lr=lr)
    for epoch in range(epochs):
        total_loss = rnn.train_epoch(numbered, optimizer, criterion)
        if epoch % 10 == 0 or epoch + 1 == epochs:
            print(f"Loss after epoch {epoch}:\t{total_loss / len(numbered)}")
    return rnn
