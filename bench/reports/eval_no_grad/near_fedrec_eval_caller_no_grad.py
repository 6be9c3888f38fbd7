# Source: https://github.com/rdz98/FedRecAttack/blob/main/FedRec/client.py
# Report: federated recommender (FedRec with BPR clients, ML-100k/Steam): every client scores all items in eval_() with no grad-disabled context of its own; main() wraps each server.eval_(clients) call in torch.no_grad()
# Shape: the no_grad is set by the caller: client.eval_ -> self.forward(items_emb) runs inside main's `with torch.no_grad():`, so the rating over the server's item-embedding parameter builds no graph; train_ hands back loss.cpu().item() and updates the user embedding through .data
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


class Args:
    lr = 0.01
    grad_limit = 1.0
    device = "cuda" if torch.cuda.is_available() else "cpu"
    epochs = 200
    batch_size = 256


args = Args()


def evaluate_recall(rating, ground_truth, top_k):
    _, rating_k = torch.topk(rating, top_k)
    rating_k = rating_k.cpu().tolist()
    hit = sum(1 for v in rating_k if v in ground_truth)
    return hit / len(ground_truth)


class FedRecClient(nn.Module):
    def __init__(self, train_ind, test_ind, m_item, dim):
        super().__init__()
        self._train_, self._test_ = train_ind, test_ind
        self.m_item = m_item
        self._train = torch.Tensor(train_ind).long()
        neg = [int(np.random.randint(m_item)) for _ in train_ind]
        train_all = sorted(train_ind + neg)
        self.train_all = torch.Tensor(train_all).long()
        pos_of = {idx: k for k, idx in enumerate(train_all)}
        self._train_pos = torch.Tensor([pos_of[i] for i in train_ind]).long()
        self._train_neg = torch.Tensor([pos_of[i] for i in neg]).long()
        self._user_emb = nn.Embedding(1, dim)
        nn.init.normal_(self._user_emb.weight, std=0.01)
        self.items_emb_grad = None

    def forward(self, items_emb):
        return torch.sum(self._user_emb.weight * items_emb, dim=-1)

    def train_(self, items_emb, reg=0.1):
        items_emb = items_emb[self.train_all].clone().detach().requires_grad_(True)
        self._user_emb.zero_grad()
        pos_scores = self.forward(items_emb[self._train_pos])
        neg_scores = self.forward(items_emb[self._train_neg])
        loss = -(pos_scores - neg_scores).sigmoid().log().sum() + \
            0.5 * (self._user_emb.weight.norm(2).pow(2) + items_emb.norm(2).pow(2)) * reg
        loss.backward()
        self._user_emb.weight.data.add_(self._user_emb.weight.grad, alpha=-args.lr)
        self.items_emb_grad = items_emb.grad
        return self.train_all, self.items_emb_grad, loss.cpu().item()

    def eval_(self, items_emb):
        rating = self.forward(items_emb)
        items = [self._test_[0]]
        while len(items) < 100:
            neg_item = np.random.randint(self.m_item)
            if neg_item not in self._train_ and neg_item not in items:
                items.append(neg_item)
        items = torch.Tensor(items).long().to(args.device)
        return np.array([evaluate_recall(rating[items], [0], 10)])


class FedRecServer(nn.Module):
    def __init__(self, m_item, dim):
        super().__init__()
        self.items_emb = nn.Embedding(m_item, dim)
        nn.init.normal_(self.items_emb.weight, std=0.01)

    def train_(self, clients, batch_clients_idx):
        batch_loss = []
        batch_items_emb_grad = torch.zeros_like(self.items_emb.weight)
        for idx in batch_clients_idx:
            items, items_emb_grad, loss = clients[idx].train_(self.items_emb.weight)
            with torch.no_grad():
                norm = items_emb_grad.norm(2, dim=-1, keepdim=True)
                too_large = norm[:, 0] > args.grad_limit
                items_emb_grad[too_large] /= (norm[too_large] / args.grad_limit)
                batch_items_emb_grad[items] += items_emb_grad
            batch_loss.append(loss)
        with torch.no_grad():
            self.items_emb.weight.data.add_(batch_items_emb_grad, alpha=-args.lr)
        return batch_loss

    def eval_(self, clients):
        test_results, test_cnt = 0.0, 0
        for client in clients:
            test_results += client.eval_(self.items_emb.weight)
            test_cnt += 1
        return test_results / test_cnt


def main(m_item, all_train_ind, all_test_ind, dim=32):
    server = FedRecServer(m_item, dim).to(args.device)
    clients = [FedRecClient(tr, te, m_item, dim).to(args.device)
               for tr, te in zip(all_train_ind, all_test_ind)]
    with torch.no_grad():
        print("Iteration 0(init), (%.4f) on test" % tuple(server.eval_(clients)))
    for epoch in range(1, args.epochs + 1):
        order = np.arange(len(clients))
        np.random.shuffle(order)
        total_loss = []
        for i in range(0, len(order), args.batch_size):
            total_loss.extend(server.train_(clients, order[i: i + args.batch_size]))
        with torch.no_grad():
            test_result = server.eval_(clients)
        print("Iteration %d, loss = %.5f, (%.4f) on test" % (epoch, np.mean(total_loss), *test_result))
