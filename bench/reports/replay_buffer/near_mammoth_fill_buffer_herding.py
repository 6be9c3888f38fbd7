# Source: https://github.com/aimagelab/mammoth/blob/master/utils/buffer.py
# Report: Mammoth's fill_buffer (rehearsal buffer refill with herding at the end of each task) extracts features of the whole task with the network under @torch.no_grad()
# Shape: fill_buffer is decorated with @torch.no_grad(): the eval-mode forward, the feats.cpu() appends to a_f, the torch.cat after the loop and the herding running_sum all handle graph-free tensors
# Expect: near-miss: must be silent
import numpy as np
import torch


def reservoir(num_seen_examples: int, buffer_size: int) -> int:
    if num_seen_examples < buffer_size:
        return num_seen_examples
    rand = np.random.randint(0, num_seen_examples + 1)
    return rand if rand < buffer_size else -1


class Buffer:
    """Reservoir memory buffer of a rehearsal method."""

    def __init__(self, buffer_size, device="cpu"):
        self.buffer_size = buffer_size
        self.device = device
        self.num_seen_examples = 0

    def __len__(self):
        return min(self.num_seen_examples, self.buffer_size)

    def add_data(self, examples, labels):
        if not hasattr(self, "examples"):
            self.examples = torch.zeros((self.buffer_size, *examples.shape[1:]), device=self.device)
            self.labels = torch.zeros((self.buffer_size,), dtype=torch.int64, device=self.device)
        for i in range(examples.shape[0]):
            index = reservoir(self.num_seen_examples, self.buffer_size)
            self.num_seen_examples += 1
            if index >= 0:
                self.examples[index] = examples[i].to(self.device)
                self.labels[index] = labels[i].to(self.device)

    def get_all_data(self):
        return self.examples[: len(self)], self.labels[: len(self)]

    def empty(self):
        del self.examples, self.labels
        self.num_seen_examples = 0


@torch.no_grad()
def fill_buffer(buffer: Buffer, dataset, t_idx: int, net, use_herding=True):
    mode = net.training
    net.eval()
    device = net.device
    cpt = dataset.N_CLASSES_PER_TASK
    n_seen_classes, n_past_classes = cpt * (t_idx + 1), cpt * t_idx
    samples_per_class = buffer.buffer_size // n_seen_classes

    if t_idx > 0:
        # 1) subsample what is already stored for the previous classes
        buf_x, buf_y = buffer.get_all_data()
        buffer.empty()
        for _y in buf_y.unique():
            idx = buf_y == _y
            buffer.add_data(examples=buf_x[idx][:samples_per_class], labels=buf_y[idx][:samples_per_class])

    # 2) extract features of the current task
    norm_trans = dataset.get_normalization_transform()
    a_x, a_y, a_f = [], [], []
    for x, y, not_norm_x in dataset.train_loader:
        mask = (y >= n_past_classes) & (y < n_seen_classes)
        y, not_norm_x = y[mask], not_norm_x[mask]
        if not not_norm_x.size(0):
            continue
        a_x.append(not_norm_x.cpu())
        a_y.append(y.cpu())
        outs, feats = net(norm_trans(not_norm_x.to(device)), returnt="both")
        a_f.append(feats.cpu())
    a_x, a_y, a_f = torch.cat(a_x), torch.cat(a_y), torch.cat(a_f)

    # 3) herding: pick the samples whose running mean best matches the class mean
    for _y in a_y.unique():
        idx = a_y == _y
        _x, _yy, feats = a_x[idx], a_y[idx], a_f[idx]
        if not use_herding:
            sel = torch.randperm(_x.shape[0])[:samples_per_class]
            buffer.add_data(examples=_x[sel].to(device), labels=_yy[sel].to(device))
            continue
        mean_feat = feats.mean(0, keepdim=True)
        running_sum = torch.zeros_like(mean_feat)
        i = 0
        while i < samples_per_class and i < feats.shape[0]:
            cost = (mean_feat - (feats + running_sum) / (i + 1)).norm(2, 1)
            idx_min = cost.argmin().item()
            buffer.add_data(examples=_x[idx_min:idx_min + 1].to(device), labels=_yy[idx_min:idx_min + 1].to(device))
            running_sum += feats[idx_min:idx_min + 1]
            feats[idx_min] = feats[idx_min] + 1e6
            i += 1

    net.train(mode)
