# Source: https://github.com/seanswyi/sasrec-pytorch/blob/cedbc9124a109e8f7898919e7140597043b24828/src/trainer.py
# Report: SASRec sequential recommender, later commit: Trainer.evaluate keeps model.eval() and wraps the whole scoring loop over the valid/test loader in torch.no_grad()
# Shape: same Trainer class and evaluate method; the forward self.model(**inputs) runs inside with torch.no_grad(), and only .item() ranks (Python floats) are accumulated
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn


def sample_negatives(positive2negatives, positive_seqs):
    negs = torch.zeros_like(positive_seqs)
    for i, row in enumerate(positive_seqs.tolist()):
        negs[i] = torch.tensor([positive2negatives[p][0] if p else 0 for p in row])
    return negs


class Trainer:
    def __init__(self, dataset, model, optimizer, num_epochs, scheduler=None, device="cuda", k=10):
        self.train_loader = dataset.get_dataloader(dataset.user2items_train)
        self.valid_loader = dataset.get_dataloader(dataset.user2items_valid, split="valid")
        self.test_loader = dataset.get_dataloader(dataset.user2items_test, split="test")
        self.positive2negatives = dataset.positive2negatives
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.num_epochs = num_epochs
        self.device = device
        self.k = k

    def bce_loss(self, pos_idxs, neg_idxs, pos_logits, neg_logits):
        loss_fn = nn.BCEWithLogitsLoss()
        pos = pos_logits[pos_idxs]
        neg = neg_logits[neg_idxs]
        return loss_fn(pos, torch.ones_like(pos)) + loss_fn(neg, torch.zeros_like(neg))

    def train(self):
        best_ndcg, best_epoch = 0.0, 0
        for epoch in range(self.num_epochs):
            self.model.train()
            epoch_loss = 0.0
            for batch in self.train_loader:
                self.model.zero_grad()
                positive_seqs = batch.clone()
                pos_idxs = torch.where(positive_seqs != 0)
                batch[:, -1] = 0
                input_seqs = batch.roll(shifts=1)
                negative_seqs = sample_negatives(self.positive2negatives, positive_seqs)
                neg_idxs = torch.where(negative_seqs != 0)

                pos_logits, neg_logits = self.model(
                    input_seqs=input_seqs.to(self.device),
                    positive_seqs=positive_seqs.to(self.device),
                    negative_seqs=negative_seqs.to(self.device),
                )
                loss = self.bce_loss(pos_idxs, neg_idxs, pos_logits, neg_logits)
                loss.backward()
                epoch_loss += loss.item()
                self.optimizer.step()
                if self.scheduler is not None:
                    self.scheduler.step()

            ndcg, hit = self.evaluate()
            if ndcg >= best_ndcg:
                best_ndcg, best_epoch = ndcg, epoch
            print(f"epoch {epoch}: loss {epoch_loss:.4f} ndcg@{self.k} {ndcg:.4f} hit@{self.k} {hit:.4f}")
        return best_ndcg, best_epoch

    def evaluate(self, mode="valid"):
        loader = self.valid_loader if mode == "valid" else self.test_loader
        ndcg, hit, num_users = 0.0, 0.0, 0

        self.model.eval()
        with torch.no_grad():
            for input_seqs, item_idxs in loader:
                num_users += input_seqs.shape[0]
                inputs = {"input_seqs": input_seqs.to(self.device), "item_idxs": item_idxs.to(self.device)}
                outputs = self.model(**inputs)
                logits = -outputs[0]
                ranks = logits.argsort().argsort()
                for rank in (r[0].item() for r in ranks):
                    if rank < self.k:
                        ndcg += 1 / np.log2(rank + 2)
                        hit += 1

        return ndcg / num_users, hit / num_users
