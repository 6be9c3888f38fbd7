# Source: https://github.com/williamleif/graphsage-simple/issues/15
# Report: attacking a GraphSAGE model, calling model.forward() many times made memory grow until it was exhausted.
# Shape: the attack loop scores each candidate edge flip with a forward pass (no backward, no no_grad) and keeps every score tensor to rank them afterwards.
# Expect: TML001 line 16
import torch


def greedy_edge_attack(model, features, adjacency, target_node, candidates, budget=5):
    flipped = []
    for _ in range(budget):
        scores = []
        for u in candidates:
            perturbed = adjacency.clone()
            perturbed[target_node, u] = 1 - perturbed[target_node, u]
            logits = model(features, perturbed)[target_node]
            scores.append(logits.max() - logits[model.true_label(target_node)])  # expect: TML001
        best = int(torch.stack(scores).argmax())
        adjacency[target_node, candidates[best]] = 1 - adjacency[target_node, candidates[best]]
        flipped.append(candidates.pop(best))
    return flipped
