# Source: https://github.com/guoyang9/NCF/blob/89ff06ffcd2bca6bb773b54925265c208a28d318/evaluate.py
# Report: audit of the NeuMF recommender: main.py calls model.eval() and then evaluate.metrics(model, test_loader, top_k), whose loop over the test loader scores 100 candidate items per user with no torch.no_grad(), so every test batch builds and holds a full autograd graph through the embeddings and MLP tower
# Shape: fixed variant: metrics() is decorated with @torch.inference_mode(), the rest (hit/ndcg helpers, topk/take/.tolist(), the epoch loop calling model.eval() then metrics()) is unchanged
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def hit(gt_item, pred_items):
    return 1 if gt_item in pred_items else 0


def ndcg(gt_item, pred_items):
    if gt_item in pred_items:
        index = pred_items.index(gt_item)
        return np.reciprocal(np.log2(index + 2))
    return 0


@torch.inference_mode()
def metrics(model, test_loader, top_k):
    HR, NDCG = [], []
    for user, item, label in test_loader:
        user = user.cuda()
        item = item.cuda()
        predictions = model(user, item)
        _, indices = torch.topk(predictions, top_k)
        recommends = torch.take(item, indices).cpu().numpy().tolist()
        gt_item = item[0].item()
        HR.append(hit(gt_item, recommends))
        NDCG.append(ndcg(gt_item, recommends))
    return np.mean(HR), np.mean(NDCG)


def run(model, train_loader, test_loader, epochs=20, lr=1e-3, top_k=10, out_path=None):
    model.cuda()
    loss_function = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    best_hr, best_ndcg, best_epoch = 0, 0, -1
    for epoch in range(epochs):
        model.train()
        train_loader.dataset.ng_sample()
        for user, item, label in train_loader:
            user, item, label = user.cuda(), item.cuda(), label.float().cuda()
            model.zero_grad()
            prediction = model(user, item)
            loss = loss_function(prediction, label)
            loss.backward()
            optimizer.step()

        model.eval()
        HR, NDCG = metrics(model, test_loader, top_k)
        print(f"epoch {epoch:03d}  HR: {HR:.3f}  NDCG: {NDCG:.3f}")
        if HR > best_hr:
            best_hr, best_ndcg, best_epoch = HR, NDCG, epoch
            if out_path is not None:
                torch.save(model.state_dict(), out_path)
    print(f"best epoch {best_epoch:03d}: HR = {best_hr:.3f}, NDCG = {best_ndcg:.3f}")
    return best_hr, best_ndcg
