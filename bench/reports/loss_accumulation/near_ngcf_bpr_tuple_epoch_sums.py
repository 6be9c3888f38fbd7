# Source: https://github.com/huangtinglin/NGCF-PyTorch/blob/f4e7f6960cd8cd443d5537261d30b89cf52ed52d/NGCF/main.py
# Report: audit: NGCF's training loop sums the three attached loss terms returned by model.create_bpr_loss into epoch totals and appends the total to loss_loger; the fix takes .item() of each term as it arrives
# Shape: the same model method still returns the attached tuple; the caller adds batch_loss.item() etc. into float sums, so loss_loger holds Python floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphCF(nn.Module):
    def __init__(self, n_users, n_items, norm_adj, dim=64, layers=3, decay=1e-5, batch_size=1024):
        super().__init__()
        self.n_users, self.layers = n_users, layers
        self.decay, self.batch_size = decay, batch_size
        self.embedding = nn.Embedding(n_users + n_items, dim)
        self.weights = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.register_buffer("adj", norm_adj)

    def forward(self, users, pos_items, neg_items):
        ego = self.embedding.weight
        all_layers = [ego]
        for lin in self.weights:
            ego = F.leaky_relu(lin(torch.sparse.mm(self.adj, ego)))
            all_layers.append(F.normalize(ego, dim=1))
        final = torch.cat(all_layers, dim=1)
        u_emb, i_emb = final[: self.n_users], final[self.n_users:]
        return u_emb[users], i_emb[pos_items], i_emb[neg_items]

    def create_bpr_loss(self, users, pos_items, neg_items):
        pos_scores = (users * pos_items).sum(dim=1)
        neg_scores = (users * neg_items).sum(dim=1)
        mf_loss = -F.logsigmoid(pos_scores - neg_scores).mean()
        regularizer = (users.norm() ** 2 + pos_items.norm() ** 2 + neg_items.norm() ** 2) / 2
        emb_loss = self.decay * regularizer / self.batch_size
        return mf_loss + emb_loss, mf_loss, emb_loss


def train(model, sampler, evaluate, epochs=400, lr=1e-4, device="cuda"):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_loger, rec_loger = [], []
    n_batch = sampler.n_train // model.batch_size + 1
    for epoch in range(epochs):
        model.train()
        loss, mf_loss, emb_loss = 0.0, 0.0, 0.0
        for _ in range(n_batch):
            users, pos_items, neg_items = (t.to(device) for t in sampler.sample())
            u_e, pos_e, neg_e = model(users, pos_items, neg_items)
            batch_loss, batch_mf_loss, batch_emb_loss = model.create_bpr_loss(u_e, pos_e, neg_e)
            optimizer.zero_grad()
            batch_loss.backward()
            optimizer.step()
            loss += batch_loss.item()
            mf_loss += batch_mf_loss.item()
            emb_loss += batch_emb_loss.item()
        if (epoch + 1) % 10 != 0:
            print(f"epoch {epoch}: train=[{loss:.5f} = {mf_loss:.5f} + {emb_loss:.5f}]")
            continue
        recall = evaluate(model)
        loss_loger.append(loss)
        rec_loger.append(recall)
        print(f"epoch {epoch}: loss={loss:.5f} recall@20={recall:.5f}")
    return loss_loger, rec_loger
