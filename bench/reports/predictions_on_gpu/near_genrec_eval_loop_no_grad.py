# Source: https://github.com/meta-recsys/generative-recommenders/pull/387
# Report: The generative-recommenders eval_loop and train_eval_loop ran evaluation forward passes with autograd enabled; the PR wrapped them in torch.no_grad() to cut GPU memory.
# Shape: Fixed form: the evaluation loop body runs under torch.no_grad(), so scoring builds no graph and only Python floats are accumulated.
# Expect: near-miss: must be silent
import torch


def retrieval_metrics(scores, target_ids, k=10):
    topk = scores.topk(k, dim=-1).indices
    hits = (topk == target_ids.unsqueeze(-1)).any(-1).float()
    ranks = (scores > scores.gather(1, target_ids.unsqueeze(-1))).sum(-1) + 1
    return hits.sum().item(), (1.0 / ranks.float()).sum().item()


def eval_loop(model, eval_loader, item_embeddings, device="cuda", k=10):
    model.eval()
    n, hr_sum, mrr_sum = 0, 0.0, 0.0
    with torch.no_grad():
        for batch in eval_loader:
            hist = batch["history_ids"].to(device)
            lengths = batch["history_lengths"].to(device)
            target = batch["target_ids"].to(device)
            user_emb = model(hist, lengths)
            scores = user_emb @ item_embeddings.weight.t()
            hr, mrr = retrieval_metrics(scores, target, k)
            hr_sum += hr
            mrr_sum += mrr
            n += target.numel()
    model.train()
    return {"hr@k": hr_sum / n, "mrr": mrr_sum / n}


def train_eval_loop(model, train_loader, eval_loader, opt, epochs=10, device="cuda"):
    for epoch in range(epochs):
        for batch in train_loader:
            hist = batch["history_ids"].to(device)
            lengths = batch["history_lengths"].to(device)
            target = batch["target_ids"].to(device)
            logits = model(hist, lengths) @ model.item_emb.weight.t()
            loss = torch.nn.functional.cross_entropy(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, eval_loop(model, eval_loader, model.item_emb, device))
