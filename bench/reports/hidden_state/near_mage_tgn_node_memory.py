# Source: https://github.com/memgraph/mage/pull/121
# Report: Temporal Graph Networks module: per-node memory vectors updated by a GRUCell each batch are stored in Memory.memory_container; the PR's Memory.detach_tensor_grads() detaches every stored memory at the batch boundary so no batch's graph survives into the next
# Shape: same read-update-store of node memories in forward; the training loop calls tgn.detach_tensor_grads() before each batch, which rebinds every container entry to its .detach()
# Expect: near-miss: must be silent
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn


class Memory:
    def __init__(self, memory_dimension: int, device: str = "cuda"):
        self.memory_dimension = memory_dimension
        self.device = device
        self.memory_container: Dict[int, torch.Tensor] = {}

    def get_node_memory(self, node: int) -> torch.Tensor:
        if node not in self.memory_container:
            self.memory_container[node] = torch.zeros(self.memory_dimension, device=self.device)
        return self.memory_container[node]

    def get_all_nodes(self) -> List[int]:
        return list(self.memory_container.keys())

    def detach_tensor_grads(self):
        for node in self.memory_container:
            self.memory_container[node] = self.memory_container[node].detach()


class TGNEdgesSelfSupervised(nn.Module):
    def __init__(self, memory_dimension: int, message_dimension: int, device: str = "cuda"):
        super().__init__()
        self.memory = Memory(memory_dimension, device=device)
        self.memory_updater = nn.GRUCell(input_size=message_dimension, hidden_size=memory_dimension)
        self.message_fn = nn.Linear(2 * memory_dimension + 1, message_dimension)
        self.embedding = nn.Linear(memory_dimension, memory_dimension)

    def detach_tensor_grads(self) -> None:
        self.memory.detach_tensor_grads()

    def forward(self, sources: np.ndarray, destinations: np.ndarray, timestamps: np.ndarray):
        src_ids = sources.tolist()
        dst_ids = destinations.tolist()
        t = torch.as_tensor(timestamps, dtype=torch.float32, device=self.memory.device).unsqueeze(1)
        src_mem = torch.stack([self.memory.get_node_memory(n) for n in src_ids])
        dst_mem = torch.stack([self.memory.get_node_memory(n) for n in dst_ids])
        src_msg = self.message_fn(torch.cat([src_mem, dst_mem, t], dim=1))
        dst_msg = self.message_fn(torch.cat([dst_mem, src_mem, t], dim=1))

        for ids, messages in ((src_ids, src_msg), (dst_ids, dst_msg)):
            for node, message in zip(ids, messages):
                previous = self.memory.memory_container[node]
                updated = self.memory_updater(message.unsqueeze(0), previous.unsqueeze(0))
                # last message wins; the new memory goes back into the container
                self.memory.memory_container[node] = updated.squeeze(0)

        src_emb = self.embedding(torch.stack([self.memory.memory_container[n] for n in src_ids]))
        dst_emb = self.embedding(torch.stack([self.memory.memory_container[n] for n in dst_ids]))
        return src_emb, dst_emb


def train_epoch(tgn, link_head, batches, optimizer, device="cuda"):
    criterion = nn.BCEWithLogitsLoss()
    tgn.train()
    link_head.train()
    m_loss = []
    for sources, destinations, timestamps, neg_destinations in batches:
        optimizer.zero_grad()
        # batch boundary: keep the stored memories' values, drop their history
        tgn.detach_tensor_grads()
        src_emb, dst_emb = tgn(sources, destinations, timestamps)
        _, neg_emb = tgn(sources, neg_destinations, timestamps)
        pos_score = link_head(torch.cat([src_emb, dst_emb], dim=1)).squeeze(1)
        neg_score = link_head(torch.cat([src_emb, neg_emb], dim=1)).squeeze(1)
        loss = criterion(pos_score, torch.ones_like(pos_score)) + criterion(
            neg_score, torch.zeros_like(neg_score)
        )
        loss.backward()
        optimizer.step()
        m_loss.append(loss.item())
    return float(np.mean(m_loss))
