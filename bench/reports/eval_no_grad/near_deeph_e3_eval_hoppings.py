# Source: https://github.com/Xiaoxun-Gong/DeepH-E3/blob/b4f52f9fc2c4509426363163e497da803428488e/deephe3/kernel.py
# Report: DeepH-E3 issue #3 reported memory growth per structure in eval(); the kernel's eval loop runs under torch.no_grad().
# Shape: same loop and the same update_hopping store into H_pred_list, but the whole structure loop sits inside `with torch.no_grad():`, so H_pred carries no graph and lives on the CPU.
# Expect: near-miss: must be silent
import os
import time

import torch

from deephe3.data import collate


class DeepHE3Kernel:
    def __init__(self, train_config, dataset_info):
        self.train_config = train_config
        self.dataset_info = dataset_info
        self.net = None

    def update_hopping(self, hamiltonians, H_pred, x, edge_index, edge_key):
        # stores one block per (R, i, j) key; the blocks view H_pred
        for index_edge in range(edge_index.shape[1]):
            key_term = str(edge_key[index_edge].tolist())
            hamiltonians[key_term] = H_pred[index_edge]

    def load_model(self, src_path, device):
        raise NotImplementedError

    def register_constructor(self, device):
        raise NotImplementedError

    def eval(self, eval_config, dataset, model_path_list):
        H_pred_list = []
        for index_model, model_path in enumerate(model_path_list):
            construct_kernel = self.register_constructor(device=eval_config.device)
            net = self.load_model(os.path.join(model_path, 'src'), device=eval_config.device)
            checkpoint = torch.load(os.path.join(model_path, 'best_model.pkl'), map_location='cpu')
            net.load_state_dict(checkpoint['state_dict'])
            net.eval()

            with torch.no_grad():
                for index_stru, data in enumerate(dataset):
                    if len(H_pred_list) <= index_stru:
                        H_pred_list.append({})
                    print(f'Getting model {index_model} output on structure "{data.stru_id}"...')
                    batch = collate([data])
                    start = time.time()
                    output, output_edge = net(batch.to(device=eval_config.device))
                    H_pred = construct_kernel.get_H(output_edge).cpu()
                    self.update_hopping(H_pred_list[index_stru], H_pred, batch.x, batch.edge_index, batch.edge_key)
                    print(f'Finished, cost {time.time() - start:.2f} seconds.')

            print(f'Finished evaluating model {index_model} on all structures')

        for hamiltonians in H_pred_list:
            for key_term, hopping in hamiltonians.items():
                assert torch.all(torch.isnan(hopping) == False), 'Some orbitals are not predicted.'
        return H_pred_list
