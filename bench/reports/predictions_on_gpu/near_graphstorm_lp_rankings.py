# Source: https://github.com/awslabs/graphstorm/blob/00b7f31d883f61d3f8b105c9c2220bd8e5b4ce7c/python/graphstorm/eval/utils.py
# Report: link-prediction inference kept per-batch results of every test edge until the end (PR #160: scores of all positive/negative edges kept, replaced by rankings); calc_ranking moves each ranking off the GPU ("Save GPU memory") before it is collected (calc_ranking; caller lp_mini_batch_predict in python/graphstorm/model/lp_gnn.py; memory context: https://github.com/awslabs/graphstorm/pull/160)
# Shape: as in the repository (the older unconditional form): calc_ranking ends with rankings.cpu() ("Save GPU memory"), so what lp_mini_batch_predict appends to its dict of lists is a CPU tensor; th.cat once after the loop
# Expect: near-miss: must be silent
from collections import defaultdict

import torch as th


def calc_dot_pos_score(h_emb, t_emb, device=None):
    if device is not None:
        h_emb = h_emb.to(device)
        t_emb = t_emb.to(device)
    return th.sum(h_emb * t_emb, dim=-1)


def calc_dot_neg_tail_score(heads, tails, num_chunks, chunk_size, neg_sample_size, device=None):
    hidden_dim = heads.shape[1]
    if device is not None:
        heads = heads.to(device)
        tails = tails.to(device)
    tails = th.transpose(tails.reshape(num_chunks, neg_sample_size, hidden_dim), 1, 2)
    tmp = heads.reshape(num_chunks, chunk_size, hidden_dim)
    return th.bmm(tmp, tails)


class LinkPredictDotDecoder(th.nn.Module):
    def calc_test_scores(self, emb, pos_neg_tuple, neg_sample_type, device):
        scores = {}
        for canonical_etype, (pos_src, neg_src, pos_dst, neg_dst) in pos_neg_tuple.items():
            utype, _, vtype = canonical_etype
            pos_src_emb, pos_dst_emb = emb[utype][pos_src], emb[vtype][pos_dst]
            pos_scores = calc_dot_pos_score(pos_src_emb, pos_dst_emb, device)
            neg_dst_emb = emb[vtype][neg_dst]
            num_chunks = 1
            neg_scores = calc_dot_neg_tail_score(pos_src_emb, neg_dst_emb, num_chunks,
                                                 pos_src_emb.shape[0], neg_dst_emb.shape[0], device)
            scores[canonical_etype] = (pos_scores, neg_scores.reshape(-1, neg_dst_emb.shape[0]))
        return scores


def calc_ranking(pos_score, neg_score):
    """ Ranking of each positive score among its negative scores. """
    pos_score = pos_score.view(-1, 1)
    scores = th.cat([pos_score, neg_score], dim=1)
    scores = th.sigmoid(scores)
    _, indices = th.sort(scores, dim=1, descending=True)
    indices = th.nonzero(indices == 0)
    rankings = indices[:, 1].view(-1) + 1
    rankings = rankings.detach()
    rankings = rankings.cpu()  # Save GPU memory
    return rankings


def lp_mini_batch_predict(model, emb, loader, device):
    """ Mini-batch link prediction on precomputed GNN embeddings.

        Returns a dict {etype: rankings of the positive edges}.
    """
    decoder = model.decoder
    with th.no_grad():
        ranking = defaultdict(list)
        for pos_neg_tuple, neg_sample_type in loader:
            score = decoder.calc_test_scores(emb, pos_neg_tuple, neg_sample_type, device)
            for canonical_etype, s in score.items():
                pos_score, neg_score = s
                ranking[canonical_etype].append(calc_ranking(pos_score, neg_score))

        rankings = {}
        for canonical_etype, rank in ranking.items():
            rankings[canonical_etype] = th.cat(rank, dim=0)
    return rankings


def gen_mrr_score(ranking):
    logs = th.div(1.0, ranking)
    return {"mrr": th.sum(logs) / len(logs)}
