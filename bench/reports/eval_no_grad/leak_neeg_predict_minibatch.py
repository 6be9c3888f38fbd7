# Source: https://github.com/eecrazy/ConstructingNEEG_IJCAI_2018/blob/master/code/event_chain.py
# Report: issue #8: CUDA OOM while running the script-event model; predict_with_minibatch scores the whole dev set with grad on, fix proposed there is detaching the scores
# Shape: dev-set scoring helper on the model runs forward per minibatch with grad enabled and writes each slice into one preallocated GPU tensor: every slice's graph stays alive until the returned scores die
# Expect: TML003 line 49
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 1000


class EventChain(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, margin=0.015, lr=1e-4):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim * 4, hidden_dim, 1)
        self.score_a = nn.Linear(hidden_dim, 1, bias=False)
        self.score_b = nn.Linear(hidden_dim, 1)
        self.loss_function = nn.MultiMarginLoss(margin=margin)
        self.optimizer = torch.optim.RMSprop(self.parameters(), lr=lr, momentum=0.2)

    def compute_scores(self, output):
        output = output.transpose(0, 1)
        a = self.score_a(output[:, 0:8, :]).view(-1, 8)
        b = self.score_b(output[:, 8, :])
        return torch.sigmoid(a + b).mean(1).view(-1, 5)

    def forward(self, chains):
        emb = self.embedding(chains)
        emb = torch.cat([emb[:, k * 13:(k + 1) * 13, :] for k in range(4)], 2)
        context = emb[:, 0:8, :].repeat(1, 5, 1).view(5 * len(emb), 8, -1)
        candidates = emb[:, 8:13, :].contiguous().view(-1, 1, emb.size(-1))
        seq = torch.cat((context, candidates), 1).transpose(0, 1)
        h0 = torch.zeros(1, seq.size(1), self.hidden_dim, device=seq.device)
        output, _ = self.gru(seq, h0)
        return self.compute_scores(output)

    def hit_rate(self, scores, targets):
        _, order = torch.sort(scores, descending=True)
        return [(order[:, k] == targets).float().mean().item() * 100.0 for k in range(5)]

    def predict_with_minibatch(self, chains, targets):
        scores = torch.zeros(len(targets), 5).cuda()
        for i in range(len(targets) // BATCH_SIZE):
            part = slice(i * BATCH_SIZE, (i + 1) * BATCH_SIZE)
            chunk_scores = self.forward(chains[part])  # expect: TML003
            scores[part] = chunk_scores
        return self.hit_rate(scores, targets), scores


def train(model, train_data, dev_data, steps=520):
    best_acc, history = 0.0, []
    start = time.time()
    for step in range(steps):
        model.optimizer.zero_grad()
        chains, targets = train_data.next_batch(BATCH_SIZE)
        loss = model.loss_function(model(chains), targets)
        loss.backward()
        model.optimizer.step()

        dev_chains, dev_targets = dev_data.all_data()
        accs, _ = model.predict_with_minibatch(dev_chains, dev_targets)
        history.append((time.time() - start, accs[0]))
        if accs[0] > best_acc:
            best_acc = accs[0]
            torch.save(model.state_dict(), "event_chain_best.model")
    return best_acc, history
