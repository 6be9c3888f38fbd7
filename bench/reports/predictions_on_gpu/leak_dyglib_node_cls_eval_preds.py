# Source: https://github.com/yule-BUAA/DyGLib/blob/2b5c9f6cd36cf0ae354b7e3788c56749ed8f9a3b/evaluate_models_utils.py
# Report: DyGLib evaluate_model_node_classification collects every batch's predicted probabilities and labels (both on the model's device) in lists under no_grad, concatenates them after the loop and only the metrics helper moves them to the CPU.
# Shape: predicts = model[1](...) and labels = ....to(predicts.device) are device tensors appended to lists bound before the loop; the whole evaluation split's outputs stay on the GPU until get_node_classification_metrics calls .cpu().
# Expect: TML004 lines 56, 57
import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from tqdm import tqdm


def get_node_classification_metrics(predicts, labels):
    predicts = predicts.cpu().detach().numpy()
    labels = labels.cpu().numpy()
    return {"roc_auc": roc_auc_score(y_true=labels, y_score=predicts)}


class TemporalData:
    def __init__(self, src_node_ids, dst_node_ids, node_interact_times, edge_ids, labels):
        self.src_node_ids = src_node_ids
        self.dst_node_ids = dst_node_ids
        self.node_interact_times = node_interact_times
        self.edge_ids = edge_ids
        self.labels = labels


def compute_embeddings(model_name, backbone, src_ids, dst_ids, times, edge_ids, num_neighbors, time_gap):
    if model_name in ("TGAT", "CAWN", "TCL"):
        return backbone.compute_src_dst_node_temporal_embeddings(src_ids, dst_ids, times, num_neighbors=num_neighbors)
    if model_name in ("JODIE", "DyRep", "TGN"):
        return backbone.compute_src_dst_node_temporal_embeddings(
            src_ids, dst_ids, times, edge_ids=edge_ids, edges_are_positive=True, num_neighbors=num_neighbors)
    if model_name == "GraphMixer":
        return backbone.compute_src_dst_node_temporal_embeddings(
            src_ids, dst_ids, times, num_neighbors=num_neighbors, time_gap=time_gap)
    return backbone.compute_src_dst_node_temporal_embeddings(src_ids, dst_ids, times)


def evaluate_model_node_classification(model_name, model: nn.Sequential, neighbor_sampler, idx_loader,
                                       data: TemporalData, loss_func, num_neighbors=20, time_gap=2000):
    if model_name != "JODIE":
        model[0].set_neighbor_sampler(neighbor_sampler)
    model.eval()
    with torch.no_grad():
        total_loss, y_trues, y_predicts = 0.0, [], []
        bar = tqdm(idx_loader, ncols=120)
        for batch_idx, indices in enumerate(bar):
            indices = indices.numpy()
            src_emb, _ = compute_embeddings(model_name, model[0], data.src_node_ids[indices],
                                            data.dst_node_ids[indices], data.node_interact_times[indices],
                                            data.edge_ids[indices], num_neighbors, time_gap)
            predicts = model[1](x=src_emb).squeeze(dim=-1).sigmoid()
            labels = torch.from_numpy(data.labels[indices]).float().to(predicts.device)
            loss = loss_func(input=predicts, target=labels)
            total_loss += loss.item()
            y_trues.append(labels)  # expect: TML004
            y_predicts.append(predicts)  # expect: TML004
            bar.set_description(f"evaluate batch {batch_idx + 1}, loss: {loss.item():.4f}")
        total_loss /= (batch_idx + 1)
        y_trues = torch.cat(y_trues, dim=0)
        y_predicts = torch.cat(y_predicts, dim=0)
        metrics = get_node_classification_metrics(predicts=y_predicts, labels=y_trues)
    return total_loss, metrics
