# Source: https://github.com/Alic-yuan/nlp-beginner-finish/blob/865b5fd9c4a42ee6abba464ee860f2b0fd954ca4/task5/train.py
# Report: audited: TrainModel.generate_head_test (acrostic poem sampling after every epoch) feeds the LSTM state back as `output, hidden = model(input, hidden)` with autograd enabled; this variant is the fix, sampling under @torch.no_grad()
# Shape: no longer kept: the same loop-carried (h, c) tuple, but produced inside a no_grad-decorated method, so no step holds a graph; training still builds a fresh init_hidden per batch
# Expect: near-miss: must be silent
import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data as Data

from config import Config


class PoetryModel(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, device, layer_num):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers=layer_num)
        self.linear1 = nn.Linear(hidden_dim, vocab_size)
        self.device = device

    def forward(self, inputs, hidden):
        seq_len, batch_size = inputs.size()
        output, hidden = self.lstm(self.embeddings(inputs), hidden)
        output = F.relu(self.linear1(output.view(seq_len * batch_size, -1)))
        return output, hidden

    def init_hidden(self, layer_num, batch_size):
        return (torch.zeros(layer_num, batch_size, self.hidden_dim, device=self.device),
                torch.zeros(layer_num, batch_size, self.hidden_dim, device=self.device))


class TrainModel(object):
    def __init__(self):
        self.config = Config()
        self.device = torch.device('cuda') if self.config.use_gpu else torch.device('cpu')

    def train(self, data_loader, model, optimizer, criterion, char_to_ix, ix_to_chars):
        for epoch in range(self.config.epoch_num):
            for step, x in enumerate(data_loader):
                x = x.long().transpose(1, 0).contiguous().to(self.device)
                optimizer.zero_grad()
                input_, target = x[:-1, :], x[1:, :]
                target = target.view(-1)
                # fresh (h0, c0) for every batch: nothing carried between batches
                hidden = model.init_hidden(self.config.layer_num, x.size()[1])
                output, _ = model(input_, hidden)
                loss = criterion(output, target)
                loss.backward()
                optimizer.step()
                if step % 200 == 0:
                    print('epoch: %d,loss: %f' % (epoch, loss.item()))

            torch.save(model.state_dict(), '%s_%s.pth' % (self.config.model_prefix, epoch))
            gen_poetry = ''.join(self.generate_head_test(model, '春江花月夜凉如水', char_to_ix, ix_to_chars))
            print(gen_poetry)

    @torch.no_grad()
    def generate_head_test(self, model, head_sentence, word_to_ix, ix_to_word):
        poetry = []
        head_char_len = len(head_sentence)
        sentence_len = 0
        pre_char = '<START>'

        input = torch.tensor([[word_to_ix['<START>']]], device=self.device)
        hidden = model.init_hidden(self.config.layer_num, 1)

        for i in range(self.config.max_gen_len):
            # sampled under no_grad: (h, c) carries no graph between characters
            output, hidden = model(input, hidden)
            top_index = output.data[0].topk(1)[1][0].item()
            char = ix_to_word[top_index]

            if pre_char in ['。', '！', '<START>']:
                if sentence_len == head_char_len:
                    break
                char = head_sentence[sentence_len]
                sentence_len += 1
                input = input.data.new([word_to_ix[char]]).view(1, 1)
            else:
                input = input.data.new([top_index]).view(1, 1)

            poetry.append(char)
            pre_char = char
        return poetry

    def run(self, data, char_to_ix, ix_to_chars):
        data_loader = Data.DataLoader(torch.from_numpy(data), batch_size=self.config.batch_size,
                                      shuffle=True, num_workers=1)
        model = PoetryModel(len(char_to_ix), self.config.embedding_dim, self.config.hidden_dim,
                            self.device, self.config.layer_num).to(self.device)
        optimizer = optim.Adam(model.parameters(), lr=self.config.lr, weight_decay=self.config.weight_decay)
        criterion = nn.CrossEntropyLoss()
        self.train(data_loader, model, optimizer, criterion, char_to_ix, ix_to_chars)
