# Source: https://github.com/gusye1234/LightGCN-PyTorch/blob/024317535ae27cf07817795b37f95cf6c12a96a5/code/Procedure.py
# Report: audit: LightGCN's Test() is correct in a tricky way (under no_grad it keeps only rating_K.cpu() per user batch and turns the full user x item score matrix into numpy before deleting it; a `ratings` list is left commented out); this is the variant it avoided, keeping each batch's top-K indices and full score matrix on the GPU for the whole test set
# Shape: as the repository does it: inside no_grad the full score matrix is turned into numpy for the per-batch AUC and deleted, and only rating_k.cpu() is kept in rating_list for the recall/NDCG pass after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch


def minibatch(items, batch_size):
    for i in range(0, len(items), batch_size):
        yield items[i:i + batch_size]


def recall_ndcg(sorted_items, ground_truth, k):
    hits = np.array([[item in set(gt) for item in row[:k]] for row, gt in zip(sorted_items, ground_truth)], dtype=float)
    recall = sum(h.sum() / max(len(gt), 1) for h, gt in zip(hits, ground_truth))
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = [discounts[:min(len(gt), k)].sum() for gt in ground_truth]
    ndcg = sum((h * discounts).sum() / max(i, 1e-9) for h, i in zip(hits, ideal))
    return recall, ndcg


def auc(scores, positives):
    labels = np.zeros_like(scores)
    labels[list(positives)] = 1.0
    order = scores.argsort()
    ranks = np.empty_like(order, dtype=float)
    ranks[order] = np.arange(1, len(scores) + 1)
    n_pos = labels.sum()
    n_neg = len(scores) - n_pos
    return (ranks[labels == 1].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1)


def test(dataset, rec_model, device, topk=20, u_batch_size=100):
    rec_model = rec_model.eval()
    users = list(dataset.test_dict.keys())
    rating_list, truth_list, aucs = [], [], []
    with torch.no_grad():
        for batch_users in minibatch(users, u_batch_size):
            all_pos = dataset.get_user_pos_items(batch_users)
            truth = [dataset.test_dict[u] for u in batch_users]
            truth_list.append(truth)
            batch_gpu = torch.tensor(batch_users, dtype=torch.long, device=device)
            rating = rec_model.get_users_rating(batch_gpu)
            rows = [i for i, items in enumerate(all_pos) for _ in items]
            cols = [item for items in all_pos for item in items]
            rating[rows, cols] = -(1 << 10)
            _, rating_k = torch.topk(rating, k=topk)
            scores = rating.cpu().numpy()
            aucs.extend(auc(row, gt) for row, gt in zip(scores, truth))
            del rating
            rating_list.append(rating_k.cpu())
    recall, ndcg = 0.0, 0.0
    for top, truth in zip(rating_list, truth_list):
        r, n = recall_ndcg(top.numpy(), truth, topk)
        recall, ndcg = recall + r, ndcg + n
    return {"recall": recall / len(users), "ndcg": ndcg / len(users), "auc": float(np.mean(aucs))}
