# Source: https://github.com/sasaki-yamagata/GCN_module_ddp/blob/bf70597528f15f141c82d234b58c779ce5f530db/GCN/common/method.py
# Report: HOMO/LUMO molecular GCN trained with DDP; the single-GPU version of fit() summed train_loss.item(), the DDP port dropped .item() so the epoch sum could be all_reduced
# Shape: under set_grad_enabled(phase == "train") the train-phase loss is graph-attached; loss_accum += loss * batch_size keeps every batch's loss node alive until the end of the phase
# Expect: TML001 line 50
import torch
import torch.distributed as dist
from torch import nn, optim
from torch.autograd import set_detect_anomaly
from torch.nn.parallel import DistributedDataParallel as DDP


class GraphGather(nn.Module):
    def forward(self, x, sizes):
        chunks = torch.split(x, [int(s) for s in sizes])
        return torch.stack([c.sum(dim=0) for c in chunks])


class GraphConvModel(nn.Module):
    def __init__(self, n_in, n_out, hidden=64):
        super().__init__()
        self.lin1 = nn.Linear(n_in, hidden)
        self.gather = GraphGather()
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x, edge_index, sizes):
        h = torch.tanh(self.lin1(x))
        return self.head(self.gather(h, sizes))


def fit(model, optimizer, criterion, n_epochs, dataloaders, is_detect_anomaly=False):
    is_master = torch.cuda.current_device() == 0
    batch_size = dataloaders["train"].batch_size
    history = {"epoch_num": [], "train_loss": [], "test_loss": []}

    for epoch in range(n_epochs):
        for phase in ["train", "test"]:
            dist.barrier()
            model.train() if phase == "train" else model.eval()
            loss_accum = 0

            for x_data, y in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(x_data.x, x_data.edge_index, x_data.feature_size_list)
                    loss = criterion(outputs, y)
                    if phase == "train":
                        with set_detect_anomaly(is_detect_anomaly):
                            loss.backward()
                        optimizer.step()
                    loss_accum += loss * batch_size  # expect: TML001
                    del loss

            dist.all_reduce(loss_accum, op=dist.ReduceOp.SUM)
            if is_master:
                loss_avg = loss_accum.item() / len(dataloaders[phase].dataset)
                print(f"epoch: {epoch}, {phase} loss: {loss_avg:.4f}")
                if phase == "train":
                    history["epoch_num"].append(epoch)
                    history["train_loss"].append(loss_avg)
                else:
                    history["test_loss"].append(loss_avg)
    return model, history


def main(local_rank, dataloaders, n_in, n_out, n_epochs, lr):
    model = GraphConvModel(n_in, n_out).cuda()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    model = DDP(model, device_ids=[local_rank])
    return fit(model, optimizer, nn.MSELoss(), n_epochs, dataloaders)
