# Source: https://github.com/RUCAIBox/RecBole/issues/2085
# Report: evaluation is extremely slow with the CPU pegged; the commenter traced it to DataStruct.update_tensor, which torch.cat's every batch's result onto the stored tensor
# Shape: DataStruct keeps a dict on self; update_tensor rebinds the dict entry to cat(old, new) and is called once per eval batch through the Collector from the evaluate loop
# Expect: TML008 line 21
import torch


class DataStruct:
    def __init__(self):
        self._data_dict = {}

    def __getitem__(self, name):
        return self._data_dict[name]

    def update_tensor(self, name, value):
        if name not in self._data_dict:
            self._data_dict[name] = value.cpu().clone().detach()
        else:
            if not isinstance(self._data_dict[name], torch.Tensor):
                raise ValueError("{} is not a tensor.".format(name))
            self._data_dict[name] = torch.cat(  # expect: TML008
                (self._data_dict[name], value.cpu().clone().detach()), dim=0
            )


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
