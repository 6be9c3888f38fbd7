# Source: https://github.com/leftthomas/SimCLR/blob/a68e314cbf4510d83eb6b044e6624360cca1e8ea/train.py
# Report: audited idiom: the MoCo-style train() keeps a FIFO of negative keys with queue = utils.queue_data(queue, k); queue = utils.dequeue_data(queue, dictionary_size); it is only correct because k is detached right after model_k(x_k) (variant here without the detach)
# Shape: the queue is a loop-carried name rebuilt by two helpers (torch.cat then a slice); without the detach each new queue links to the previous queue's graph and to every key encoder graph, so the chain grows every step
# Expect: TML005 line 53
import torch
import torch.nn as nn
from tqdm import tqdm


def queue_data(data, k):
    return torch.cat([data, k], dim=0)


def dequeue_data(data, k=4096):
    if len(data) > k:
        return data[-k:]
    return data


def momentum_update(model_q, model_k, beta=0.999):
    for p1, p2 in zip(model_q.parameters(), model_k.parameters()):
        p2.data.mul_(beta).add_(p1.detach().data, alpha=1 - beta)


def train(model_q, model_k, train_loader, optimizer, epoch, epochs, features_dim=128,
          dictionary_size=4096, temp=0.07):
    model_q.train()
    criterion = nn.CrossEntropyLoss()
    queue = torch.zeros((0, features_dim), dtype=torch.float).to('cuda')
    total_loss, n_data, train_bar = 0.0, 0, tqdm(train_loader)
    for (x_q, x_k), _ in train_bar:
        x_q, x_k = x_q.to('cuda'), x_k.to('cuda')
        N, K = x_q.shape[0], queue.shape[0]

        q = model_q(x_q)
        k = model_k(x_k)

        if K >= dictionary_size:
            l_pos = torch.bmm(q.view(N, 1, -1), k.view(N, -1, 1))
            l_neg = torch.mm(q.view(N, -1), queue.T.view(-1, K))
            logits = torch.cat([l_pos.view(N, 1), l_neg], dim=1)
            labels = torch.zeros(N, dtype=torch.long, device='cuda')
            loss = criterion(logits / temp, labels)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            n_data += N
            total_loss += loss.item() * N
            momentum_update(model_q, model_k)
            train_bar.set_description('Train Epoch: [{}/{}] Loss: {:.6f}'.format(epoch, epochs, total_loss / n_data))

        queue = queue_data(queue, k)  # expect: TML005
        queue = dequeue_data(queue, dictionary_size)

    return total_loss / max(n_data, 1)
