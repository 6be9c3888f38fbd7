# Source: https://github.com/DeepRank/deeprank2/pull/319
# Report: num_workers could not be used with the graph dataset because each graph was moved to the CUDA device while being loaded; the fix loads data on CPU and transfers to GPU only in the training loop
# Shape: __getitem__ delegates to a load_one_graph helper that builds a PyG Data object from HDF5 and returns data.to(self.device), where the dataset owns a CUDA device
# Expect: TML010 line 40
import h5py
import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader


class GraphDataset(torch.utils.data.Dataset):
    def __init__(self, hdf5_path, node_features, edge_features, target="binary", device=None):
        self.hdf5_path = hdf5_path
        self.node_features = node_features
        self.edge_features = edge_features
        self.target = target
        self.device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
        with h5py.File(hdf5_path, "r") as f5:
            self.index_entries = list(f5.keys())

    def __len__(self):
        return len(self.index_entries)

    def __getitem__(self, index):
        return self.load_one_graph(self.hdf5_path, self.index_entries[index])

    def load_one_graph(self, fname, entry_name):
        with h5py.File(fname, "r") as f5:
            grp = f5[entry_name]
            node_data = [grp["node_features"][feat][()] for feat in self.node_features]
            x = torch.tensor(np.stack(node_data, axis=-1), dtype=torch.float)
            edge_index = torch.tensor(grp["edge_features"]["_index"][()], dtype=torch.long)
            edge_data = [grp["edge_features"][feat][()] for feat in self.edge_features]
            edge_attr = torch.tensor(np.stack(edge_data, axis=-1), dtype=torch.float)
            y = torch.tensor([grp["target_values"][self.target][()]], dtype=torch.float)
            pos = torch.tensor(grp["node_features"]["_position"][()], dtype=torch.float)
        data = Data(x=x, edge_index=edge_index.t().contiguous(), edge_attr=edge_attr, y=y, pos=pos)
        data.entry_name = entry_name
        return data.to(self.device)  # expect: TML010


class Trainer:
    def __init__(self, neuralnet, dataset_train, batch_size=32, num_workers=4):
        self.device = dataset_train.device
        self.model = neuralnet(dataset_train[0].num_features).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.lossfunc = torch.nn.BCEWithLogitsLoss()
        self.train_loader = DataLoader(
            dataset_train, batch_size=batch_size, shuffle=True, num_workers=num_workers
        )

    def _epoch(self):
        self.model.train()
        running_loss = 0.0
        for data_batch in self.train_loader:
            self.optimizer.zero_grad()
            pred = self.model(data_batch)
            loss = self.lossfunc(pred.squeeze(-1), data_batch.y)
            loss.backward()
            self.optimizer.step()
            running_loss += loss.item() * data_batch.num_graphs
        return running_loss / len(self.train_loader.dataset)
