# Source: https://github.com/pytorch/pytorch/issues/1840
# Report: GPU port of the BiLSTM-CRF tutorial grows GPU memory without limit until OOM; maintainers point at `sum_log_likelihood += neg_log_likelihood`, which keeps the graph of every previous step alive.
# Shape: same loop and `neg_log_likelihood` method; the epoch total takes `.item()` of each loss (the fix suggested in the thread), so only a Python float is kept.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def prepare_sequence(seq, to_ix, device):
    return torch.tensor([to_ix[w] for w in seq], dtype=torch.long, device=device)


def train_tagger(model: nn.Module, training_data, word_to_ix, tag_to_ix, device, epochs=300):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    history = []
    for epoch in range(epochs):
        sum_log_likelihood = 0
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix, device)
            targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long, device=device)

            neg_log_likelihood = model.neg_log_likelihood(sentence_in, targets)
            neg_log_likelihood.backward()
            optimizer.step()

            sum_log_likelihood += neg_log_likelihood.item()

        avg = sum_log_likelihood / len(training_data)
        history.append(avg)
        if epoch % 10 == 0:
            print(f"epoch {epoch}: mean NLL {float(avg):.4f}")
    return history

