# Source: https://github.com/twitter-research/tgn/blob/24cc39370dfb5ede4b3ab6a706929a779cbc4947/train_self_supervised.py
# Report: audited correct idiom: TGN writes GRU-updated node memory back into a persistent memory tensor every batch and calls tgn.memory.detach_memory() after optimizer.step() "so we don't backpropagate to the start of time" (Memory in modules/memory.py at cd1530a1983c6d3d773083694fbf303565cdfbb1)
# Shape: leak made by removing the safeguard: the detach_memory() call after optimizer.step() is gone, so the memory written by set_memory carries each batch's graph into the next one (state on self, read back through get_memory); raw-message store of the original dropped
# Expect: TML005 line 51
import math

import numpy as np
import torch
from torch import nn


class Memory(nn.Module):
    def __init__(self, n_nodes, memory_dimension, device="cpu"):
        super().__init__()
        self.n_nodes = n_nodes
        self.memory_dimension = memory_dimension
        self.device = device
        self.__init_memory__()

    def __init_memory__(self):
        # Treat memory as parameter so that it is saved and loaded together with the model
        self.memory = nn.Parameter(torch.zeros((self.n_nodes, self.memory_dimension)).to(self.device),
                                   requires_grad=False)
        self.last_update = nn.Parameter(torch.zeros(self.n_nodes).to(self.device), requires_grad=False)

    def get_memory(self, node_idxs):
        return self.memory[node_idxs, :]

    def set_memory(self, node_idxs, values):
        self.memory[node_idxs, :] = values

    def detach_memory(self):
        self.memory.detach_()


class TGN(nn.Module):
    def __init__(self, n_nodes, edge_dim, memory_dim, time_dim, device):
        super().__init__()
        self.memory = Memory(n_nodes, memory_dim, device=device)
        self.time_encoder = nn.Linear(1, time_dim)
        self.message_function = nn.Linear(2 * memory_dim + edge_dim + time_dim, memory_dim)
        self.memory_updater = nn.GRUCell(input_size=memory_dim, hidden_size=memory_dim)
        self.affinity_score = nn.Linear(2 * memory_dim, 1)

    def update_memory(self, sources, destinations, edge_feats, timestamps):
        src_memory = self.memory.get_memory(sources)
        dst_memory = self.memory.get_memory(destinations)
        time_feats = self.time_encoder(timestamps.unsqueeze(1))
        messages = self.message_function(torch.cat([src_memory, dst_memory, edge_feats, time_feats], dim=1))
        updated_memory = self.memory_updater(messages, src_memory)
        self.memory.set_memory(sources, updated_memory)  # expect: TML005
        self.memory.last_update[sources] = timestamps

    def compute_edge_probabilities(self, sources, destinations, negatives, timestamps, edge_feats):
        self.update_memory(sources, destinations, edge_feats, timestamps)
        src = self.memory.get_memory(sources)
        pos = self.affinity_score(torch.cat([src, self.memory.get_memory(destinations)], dim=1))
        neg = self.affinity_score(torch.cat([src, self.memory.get_memory(negatives)], dim=1))
        return pos.sigmoid(), neg.sigmoid()


def train(tgn, train_data, train_rand_sampler, args, device):
    criterion = torch.nn.BCELoss()
    optimizer = torch.optim.Adam(tgn.parameters(), lr=args.lr)
    num_instance = len(train_data.sources)
    num_batch = math.ceil(num_instance / args.bs)
    for epoch in range(args.n_epoch):
        tgn.memory.__init_memory__()
        m_loss = []
        for k in range(0, num_batch, args.backprop_every):
            loss = 0
            optimizer.zero_grad()
            for j in range(args.backprop_every):
                batch_idx = k + j
                if batch_idx >= num_batch:
                    continue
                s, e = batch_idx * args.bs, min(num_instance, (batch_idx + 1) * args.bs)
                sources = torch.from_numpy(train_data.sources[s:e]).to(device)
                destinations = torch.from_numpy(train_data.destinations[s:e]).to(device)
                timestamps = torch.from_numpy(train_data.timestamps[s:e]).float().to(device)
                edge_feats = torch.from_numpy(train_data.edge_features[s:e]).float().to(device)
                _, negatives = train_rand_sampler.sample(e - s)
                negatives = torch.from_numpy(negatives).to(device)
                with torch.no_grad():
                    pos_label = torch.ones(e - s, dtype=torch.float, device=device)
                    neg_label = torch.zeros(e - s, dtype=torch.float, device=device)
                tgn = tgn.train()
                pos_prob, neg_prob = tgn.compute_edge_probabilities(sources, destinations, negatives,
                                                                    timestamps, edge_feats)
                loss += criterion(pos_prob.squeeze(), pos_label) + criterion(neg_prob.squeeze(), neg_label)
            loss /= args.backprop_every
            loss.backward()
            optimizer.step()
            m_loss.append(loss.item())
        print('epoch {} mean loss {:.4f}'.format(epoch, np.mean(m_loss)))
