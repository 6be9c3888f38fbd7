# Source: https://github.com/RUCAIBox/RecBole/issues/2085
# Report: evaluation is extremely slow with the CPU pegged; the commenter traced it to DataStruct.update_tensor, which torch.cat's every batch's result onto the stored tensor
# Shape: fixed variant: update_tensor appends the detached CPU chunk to a per-key list; the single torch.cat happens lazily when the metric reads the key
# Expect: near-miss: must be silent
import torch


class DataStruct:
    def __init__(self):
        self._data_dict = {}

    def __getitem__(self, name):
        chunks = self._data_dict[name]
        return torch.cat(chunks, dim=0)

    def update_tensor(self, name, value):
        chunk = value.cpu().clone().detach()
        if name not in self._data_dict:
            self._data_dict[name] = [chunk]
        else:
            if not isinstance(self._data_dict[name], list):
                raise ValueError("{} is not a tensor list.".format(name))
            self._data_dict[name].append(chunk)


class Collector:
    def __init__(self, topk):
        self.topk = max(topk)
        self.data_struct = DataStruct()

    def eval_batch_collect(self, scores, positive_u, positive_i):
        _, topk_idx = torch.topk(scores, self.topk, dim=-1)
        pos_matrix = torch.zeros_like(scores, dtype=torch.int)
        pos_matrix[positive_u, positive_i] = 1
        pos_len_list = pos_matrix.sum(dim=1, keepdim=True)
        pos_idx = torch.gather(pos_matrix, dim=1, index=topk_idx)
        result = torch.cat((pos_idx, pos_len_list), dim=1)
        self.data_struct.update_tensor("rec.topk", result)


@torch.no_grad()
def evaluate(model, eval_data, collector, device="cuda"):
    model.eval()
    for batch_idx, (interaction, positive_u, positive_i) in enumerate(eval_data):
        interaction = interaction.to(device)
        scores = model.full_sort_predict(interaction)
        scores = scores.view(-1, model.n_items)
        scores[:, 0] = -float("inf")
        collector.eval_batch_collect(scores, positive_u, positive_i)
    return collector.data_struct
