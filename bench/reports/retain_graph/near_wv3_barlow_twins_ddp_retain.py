# Source: https://github.com/kaushikCanada/landcover-ssl/blob/2aa80f9f63745b43775e5d22a90127b0af77e971/app/src/train/selfsupervised/ddp-train.py
# Report: audit of a SLURM/DDP Barlow Twins pre-training script on WorldView-3 satellite tiles (11 bands): the only backward of each step was loss.backward(retain_graph=True), keeping each step's two-view graph alive into the next step
# Shape: same loop with a plain loss.backward() (one loss, one backward: nothing needs the graph again); the running loss is summed as loss.detach() on the device (the repo's other update) and read with float() only when printing
# Expect: near-miss: must be silent
import datetime
import os
import time

import torch
import torch.distributed as dist
from lightly.loss import BarlowTwinsLoss
from torch.utils.data import ConcatDataset, DataLoader
from torch.utils.data.distributed import DistributedSampler

from data_utils.statistics import WORLDVIEW3_NORMALIZE
from data_utils.wv3_unlabelled_dataset import Worldview3UnlabelledDataset
from train_utils.barlowtwinstrainer import BarlowTwinsTask
from train_utils.custom_multi_view_transform import CustomMultiViewTransform

PRINT_FREQ = 10


def train(epoch, net, criterion, optimizer, train_loader, train_rank):
    net.train()
    running_loss = 0.0
    epoch_start = time.time()
    for i, batch in enumerate(train_loader):
        x0, x1 = [image.cuda().squeeze(1) for image in batch["image"]]
        z0 = net(x0)
        z1 = net(x1)
        loss = criterion(z0, z1)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        running_loss += loss.detach()
        if i % PRINT_FREQ == 0:
            mean_loss = float(running_loss) / PRINT_FREQ
            print("Rank %d: [%d, %5d] loss: %.3f" % (train_rank, epoch + 1, i + 1, mean_loss))
            running_loss = 0.0
    elapsed = datetime.timedelta(seconds=time.time() - epoch_start)
    print("From Rank: {}, Training time {}".format(train_rank, elapsed))


def build_loader(data_dir, batch_size, num_workers):
    transform = CustomMultiViewTransform(input_size=256, normalize=WORLDVIEW3_NORMALIZE)
    toronto = Worldview3UnlabelledDataset(root=data_dir + "/AZURE/cleaned_all_gta_256m/", transforms=transform)
    montreal = Worldview3UnlabelledDataset(root=data_dir + "/AZURE/cleaned_all_montreal_256m/", transforms=transform)
    dataset = ConcatDataset([toronto, montreal])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=True, num_workers=num_workers, sampler=sampler)
    return loader, sampler


def main(data_dir, batch_size=768, max_epochs=2, num_workers=1, init_method="tcp://127.0.0.1:3456", world_size=1):
    ngpus_per_node = torch.cuda.device_count()
    local_rank = int(os.environ.get("SLURM_LOCALID", 0))
    rank = int(os.environ.get("SLURM_NODEID", 0)) * ngpus_per_node + local_rank
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method=init_method, world_size=world_size, rank=rank)

    loader, sampler = build_loader(data_dir, batch_size, num_workers)
    model = BarlowTwinsTask(model="resnet18", in_channels=11, batch_size=batch_size).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.06)
    criterion = BarlowTwinsLoss(gather_distributed=True)

    for epoch in range(max_epochs):
        sampler.set_epoch(epoch)
        train(epoch, model, criterion, optimizer, loader, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(os.environ["DATA_DIR"])
