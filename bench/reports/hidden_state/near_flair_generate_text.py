# Source: https://github.com/flairNLP/flair/issues/210
# Report: LanguageModel.generate_text() ran its character-by-character sampling loop with autograd on, so generating long texts on GPU ran out of memory; fix was to wrap it in torch.no_grad()
# Shape: same sampling loop feeding the LSTM state back into self.forward, but the whole loop now runs inside torch.no_grad(), so the state carries no graph
# Expect: near-miss: must be silent
import torch
from torch import nn


class CharLanguageModel(nn.Module):
    def __init__(self, dictionary, hidden_size=1024, nlayers=1, embedding_size=100):
        super().__init__()
        self.dictionary = dictionary
        self.hidden_size = hidden_size
        self.nlayers = nlayers
        self.encoder = nn.Embedding(len(dictionary), embedding_size)
        self.rnn = nn.LSTM(embedding_size, hidden_size, nlayers)
        self.decoder = nn.Linear(hidden_size, len(dictionary))

    def init_hidden(self, bsz):
        weight = next(self.parameters()).detach()
        return (weight.new_zeros(self.nlayers, bsz, self.hidden_size),
                weight.new_zeros(self.nlayers, bsz, self.hidden_size))

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(output), output, hidden

    def generate_text(self, prefix="\n", number_of_characters=1000, temperature=1.0):
        device = next(self.parameters()).device
        with torch.no_grad():
            hidden = self.init_hidden(1)
            ids = [self.dictionary.get_idx_for_item(c) for c in prefix]
            input = torch.tensor(ids, device=device).unsqueeze(1)
            characters = []
            log_prob = torch.zeros(1, device=device)
            for _ in range(number_of_characters):
                prediction, _, hidden = self.forward(input, hidden)
                decoder_output = prediction[-1].squeeze()
                word_weights = decoder_output.div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                log_prob += decoder_output[word_idx] - torch.logsumexp(decoder_output, dim=0)
                input = word_idx.view(1, 1).to(device)
                characters.append(self.dictionary.get_item_for_index(word_idx.item()))
            return prefix + "".join(characters), -log_prob.item() / number_of_characters
