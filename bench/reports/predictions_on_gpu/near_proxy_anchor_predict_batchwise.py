# Source: https://github.com/tjddus9597/Proxy-Anchor-CVPR2020/blob/952c5af50375fed675a2526519b39b95db1b1fb3/code/utils.py
# Report: audit: predict_batchwise appends every row of the CUDA embedding output to per-field lists, so the eval set's embeddings pile up on the GPU before recall@k
# Shape: same per-field lists and row-by-row appends under no_grad, but the model output is brought to the host with .cpu() before its rows are kept; the stacked matrix goes back to the GPU once, after the loop
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from tqdm import tqdm


def l2_norm(x):
    norm = torch.sqrt(torch.sum(x.pow(2), dim=1, keepdim=True).clamp_min(1e-12))
    return x / norm


def calc_recall_at_k(targets, neighbours, k):
    hits = 0
    for t, y in zip(targets, neighbours):
        if t in y[:k]:
            hits += 1
    return hits / float(len(targets))


def predict_batchwise(model, dataloader):
    was_training = model.training
    model.eval()
    n_fields = len(dataloader.dataset[0])
    A = [[] for _ in range(n_fields)]
    with torch.no_grad():
        for batch in tqdm(dataloader, desc="embedding"):
            for i, J in enumerate(batch):
                # field 0: images, field 1: labels, field 2: indices
                if i == 0:
                    J = model(J.cuda()).cpu()
                for j in J:
                    A[i].append(j)
    model.train(was_training)
    return [torch.stack(A[i]) for i in range(n_fields)]


def evaluate_cos(model, dataloader, ks=(1, 2, 4, 8, 16, 32)):
    X, T = predict_batchwise(model, dataloader)[:2]
    X = l2_norm(X.cuda())
    T = T.to(X.device)
    K = max(ks)
    cos_sim = F.linear(X, X)
    neighbours = T[cos_sim.topk(1 + K)[1][:, 1:]].cpu()
    targets = T.cpu()
    recall = []
    for k in ks:
        r_at_k = calc_recall_at_k(targets, neighbours, k)
        recall.append(r_at_k)
        print(f"R@{k}: {100 * r_at_k:.3f}")
    return recall


def fit(model, criterion, train_loader, eval_loader, epochs=60, lr=1e-4):
    params = list(model.parameters()) + list(criterion.parameters())
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    best = 0.0
    for epoch in range(epochs):
        model.train()
        for images, labels in train_loader:
            images, labels = images.cuda(), labels.cuda()
            opt.zero_grad(set_to_none=True)
            loss = criterion(model(images), labels)
            loss.backward()
            opt.step()
        recalls = evaluate_cos(model, eval_loader)
        if recalls[0] > best:
            best = recalls[0]
            torch.save(model.state_dict(), "best_proxy_anchor.pth")
    return best
