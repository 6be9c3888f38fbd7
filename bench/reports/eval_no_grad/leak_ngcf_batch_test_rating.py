# Source: https://github.com/huangtinglin/NGCF-PyTorch/blob/f4e7f6960cd8cd443d5537261d30b89cf52ed52d/NGCF/utility/batch_test.py
# Report: audit: NGCF's test() scores every user batch against all items by calling the model (full graph propagation over the normalized adjacency) with autograd on; it detaches the rating matrix only afterwards, so each test batch builds and saves the whole propagation graph
# Shape: a test helper called from the training loop; the model call that returns embeddings runs outside no_grad, the rating is .detach().cpu()'d before ranking
# Expect: TML003 line 31
import multiprocessing

import numpy as np
import torch

KS = (20, 40)


def rank_one_user(args):
    scores, pos_test, train_items, ks = args
    scores = scores.copy()
    scores[list(train_items)] = -np.inf
    top = np.argsort(-scores)[: max(ks)]
    hits = np.isin(top, list(pos_test)).astype(np.float32)
    recall = [hits[:k].sum() / max(len(pos_test), 1) for k in ks]
    precision = [hits[:k].mean() for k in ks]
    return np.array(recall), np.array(precision)


def test(model, data, users_to_test, batch_size=1024, device="cuda"):
    result = {"recall": np.zeros(len(KS)), "precision": np.zeros(len(KS))}
    pool = multiprocessing.Pool(8)
    all_items = torch.arange(data.n_items, device=device)
    n_users = len(users_to_test)
    for start in range(0, n_users, batch_size):
        user_batch = torch.tensor(users_to_test[start:start + batch_size], device=device)
        u_emb, i_emb, _ = model(user_batch, all_items, all_items[:0])  # expect: TML003
        rate_batch = model.rating(u_emb, i_emb).detach().cpu().numpy()
        jobs = [
            (rate_batch[row], data.test_set[int(u)], data.train_items.get(int(u), ()), KS)
            for row, u in enumerate(user_batch.tolist())
        ]
        for recall, precision in pool.map(rank_one_user, jobs):
            result["recall"] += recall / n_users
            result["precision"] += precision / n_users
    pool.close()
    return result


def fit(model, data, optimizer, epochs=400, device="cuda"):
    history = []
    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        for users, pos, neg in data.batches(device):
            u_e, p_e, n_e = model(users, pos, neg)
            loss, _, _ = model.create_bpr_loss(u_e, p_e, n_e)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        if (epoch + 1) % 10 == 0:
            ret = test(model, data, list(data.test_set))
            history.append((epoch_loss, ret["recall"][0]))
            print(f"epoch {epoch}: loss={epoch_loss:.4f} recall@20={ret['recall'][0]:.4f}")
    return history
